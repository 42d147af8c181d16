import { errorResponses } from "@agentplane/problem-details";
import { createRoute, z } from "@hono/zod-openapi";
import { AgentProfile, UpdateModelsBody, UpdateVerboseBody } from "./agent.ts";
import {
  ChatMessageList,
  CreateThreadBody,
  PostMessageBody,
  PostMessageQuery,
  Thread,
  ThreadList,
  TurnResult,
} from "./threads.ts";
import {
  CreateWebhookSubscriptionBody,
  SetReceiverEnabledBody,
  UpdateWebhookSubscriptionBody,
  WebhookReceiverState,
  WebhookRunList,
  WebhookSubscription,
} from "./webhooks.ts";

// Runtime routes carry no version segment and no authentication (spec "Runtime" authentication):
// the platform routing in front of the runtime authenticates.
const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});
const body = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { "application/json": { schema } },
});
const threadIdParam = z.object({
  threadId: z
    .string()
    .min(1)
    .openapi({ param: { name: "threadId", in: "path" } }),
});
const nameParam = z.object({
  name: z
    .string()
    .min(1)
    .openapi({ param: { name: "name", in: "path" } }),
});

export const getProfileRoute = createRoute({
  method: "get",
  path: "/agents/profile",
  operationId: "getAgentProfile",
  responses: { 200: json(AgentProfile, "The agent profile"), 500: errorResponses[500] },
});

export const updateVerboseRoute = createRoute({
  method: "patch",
  path: "/agents/verbose",
  operationId: "updateAgentVerbose",
  request: { body: body(UpdateVerboseBody) },
  responses: { 200: json(AgentProfile, "The updated profile"), 400: errorResponses[400] },
});

export const updateModelsRoute = createRoute({
  method: "patch",
  path: "/agents/models",
  operationId: "updateAgentModels",
  request: { body: body(UpdateModelsBody) },
  responses: { 200: json(AgentProfile, "The updated profile"), 400: errorResponses[400] },
});

export const listThreadsRoute = createRoute({
  method: "get",
  path: "/agents/threads",
  operationId: "listThreads",
  responses: { 200: json(ThreadList, "Web chat threads, newest first") },
});

export const createThreadRoute = createRoute({
  method: "post",
  path: "/agents/threads",
  operationId: "createThread",
  request: { body: { required: false, content: { "application/json": { schema: CreateThreadBody } } } },
  responses: { 201: json(Thread, "The new thread"), 400: errorResponses[400] },
});

export const listMessagesRoute = createRoute({
  method: "get",
  path: "/agents/threads/{threadId}/messages",
  operationId: "listThreadMessages",
  request: { params: threadIdParam },
  responses: { 200: json(ChatMessageList, "Visible messages, oldest first"), 404: errorResponses[404] },
});

export const postMessageRoute = createRoute({
  method: "post",
  path: "/agents/threads/{threadId}/messages",
  operationId: "postThreadMessage",
  request: { params: threadIdParam, query: PostMessageQuery, body: body(PostMessageBody) },
  responses: {
    200: {
      description: "The delivered steps: an SSE stream (`message`, `done`, `error` events) or, with stream=false, JSON",
      content: { "text/event-stream": { schema: z.string() }, "application/json": { schema: TurnResult } },
    },
    400: errorResponses[400],
    404: errorResponses[404],
    502: errorResponses[500],
  },
});

export const getWebhooksRoute = createRoute({
  method: "get",
  path: "/agents/webhooks",
  operationId: "getWebhookReceiver",
  responses: { 200: json(WebhookReceiverState, "The receiver switch and every subscription") },
});

export const setReceiverEnabledRoute = createRoute({
  method: "put",
  path: "/agents/webhooks/enabled",
  operationId: "setWebhookReceiverEnabled",
  request: { body: body(SetReceiverEnabledBody) },
  responses: { 200: json(WebhookReceiverState, "The receiver state"), 400: errorResponses[400] },
});

export const createSubscriptionRoute = createRoute({
  method: "post",
  path: "/agents/webhook-subscriptions",
  operationId: "createWebhookSubscription",
  request: { body: body(CreateWebhookSubscriptionBody) },
  responses: {
    201: json(WebhookSubscription, "The new subscription"),
    400: errorResponses[400],
    409: errorResponses[409],
  },
});

export const getSubscriptionRoute = createRoute({
  method: "get",
  path: "/agents/webhook-subscriptions/{name}",
  operationId: "getWebhookSubscription",
  request: { params: nameParam },
  responses: { 200: json(WebhookSubscription, "The subscription"), 404: errorResponses[404] },
});

export const updateSubscriptionRoute = createRoute({
  method: "patch",
  path: "/agents/webhook-subscriptions/{name}",
  operationId: "updateWebhookSubscription",
  request: { params: nameParam, body: body(UpdateWebhookSubscriptionBody) },
  responses: {
    200: json(WebhookSubscription, "The updated subscription"),
    400: errorResponses[400],
    404: errorResponses[404],
  },
});

export const deleteSubscriptionRoute = createRoute({
  method: "delete",
  path: "/agents/webhook-subscriptions/{name}",
  operationId: "deleteWebhookSubscription",
  request: { params: nameParam },
  responses: { 204: { description: "Deleted" }, 404: errorResponses[404] },
});

export const listSubscriptionRunsRoute = createRoute({
  method: "get",
  path: "/agents/webhook-subscriptions/{name}/runs",
  operationId: "listWebhookRuns",
  request: {
    params: nameParam,
    query: z.object({
      limit: z.coerce
        .number()
        .int()
        .min(1)
        .max(200)
        .default(50)
        .openapi({ param: { name: "limit", in: "query" } }),
    }),
  },
  responses: { 200: json(WebhookRunList, "Recent runs, newest first"), 404: errorResponses[404] },
});

/**
 * The webhook receiver (spec "Runtime: webhook receiver"). Served by a plain handler on the hot
 * path (the body is read as it streams, capped at 1 MiB); registered here so the runtime's
 * OpenAPI document lists it.
 */
export const receiveWebhookRoute = createRoute({
  method: "post",
  path: "/agents/webhooks/{name}",
  operationId: "receiveWebhook",
  summary: "Receive a webhook",
  description:
    "Takes a JSON object (at most 1 MiB) from an external system for the named subscription. Checked in this order: receiver off (403), unknown name (404), subscription inactive (403), the subscription's verification (401), a delivery id seen in the last 24 h (200 with the first answer), body not a JSON object (400), event not subscribed (200 `ignored`), deliver-only (200 `delivered`), queue full (429 with Retry-After); otherwise the run is stored and answered 202 without waiting for it.",
  request: {
    params: nameParam,
    body: { required: true, content: { "application/json": { schema: z.record(z.string(), z.unknown()) } } },
  },
  responses: {
    200: json(
      z.object({
        status: z.enum(["ignored", "delivered", "accepted"]),
        event: z.string().nullable(),
        runId: z.string().optional(),
        duplicate: z.boolean().optional(),
      }),
      "Not run: the event is not subscribed, the subscription only delivers, or the delivery id was seen in the last 24 h (`duplicate`: the first delivery's status and run id)",
    ),
    202: json(
      z.object({ status: z.literal("accepted"), event: z.string().nullable(), runId: z.string() }),
      "Stored; the run starts without the sender waiting",
    ),
    400: errorResponses[400],
    401: errorResponses[401],
    403: errorResponses[403],
    404: errorResponses[404],
    413: errorResponses[413],
    429: errorResponses[429],
  },
});
