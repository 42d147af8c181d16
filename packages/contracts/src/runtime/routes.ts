import { errorResponses } from "@agentplane/problem-details";
import { z } from "@hono/zod-openapi";
import { AgentProfile, UpdateModelsBody, UpdateVerboseBody } from "./agent.ts";
import { defineRuntimeRoute } from "./define-route.ts";
import {
  ChatMessageList,
  CreateThreadBody,
  ListThreadsQuery,
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

export const getAgentProfileRoute = defineRuntimeRoute(
  { errors: [500] },
  {
    method: "get",
    path: "/agents/profile",
    operationId: "getAgentProfile",
    responses: { 200: json(AgentProfile, "The agent profile") },
  },
);

export const updateAgentVerboseRoute = defineRuntimeRoute(
  { errors: [400] },
  {
    method: "patch",
    path: "/agents/verbose",
    operationId: "updateAgentVerbose",
    request: { body: body(UpdateVerboseBody) },
    responses: { 200: json(AgentProfile, "The updated profile") },
  },
);

export const updateAgentModelsRoute = defineRuntimeRoute(
  { errors: [400] },
  {
    method: "patch",
    path: "/agents/models",
    operationId: "updateAgentModels",
    request: { body: body(UpdateModelsBody) },
    responses: { 200: json(AgentProfile, "The updated profile") },
  },
);

export const listThreadsRoute = defineRuntimeRoute(
  { errors: [400] },
  {
    method: "get",
    path: "/agents/threads",
    operationId: "listThreads",
    request: { query: ListThreadsQuery },
    responses: {
      200: json(ThreadList, "Web chat threads: the main thread first, then the latest active first, a page at a time"),
    },
  },
);

export const createThreadRoute = defineRuntimeRoute(
  { errors: [400] },
  {
    method: "post",
    path: "/agents/threads",
    operationId: "createThread",
    request: { body: { required: false, content: { "application/json": { schema: CreateThreadBody } } } },
    responses: { 201: json(Thread, "The new thread") },
  },
);

export const listThreadMessagesRoute = defineRuntimeRoute(
  { errors: [404] },
  {
    method: "get",
    path: "/agents/threads/{threadId}/messages",
    operationId: "listThreadMessages",
    request: { params: threadIdParam },
    responses: { 200: json(ChatMessageList, "The newest visible messages up to 8 MiB of text, oldest first") },
  },
);

/** A message past the runtime's bound on turns in flight (per thread and in all): 429 with Retry-After. */
export const postThreadMessageRoute = defineRuntimeRoute(
  { errors: [400, 404, 429] },
  {
    method: "post",
    path: "/agents/threads/{threadId}/messages",
    operationId: "postThreadMessage",
    request: { params: threadIdParam, query: PostMessageQuery, body: body(PostMessageBody) },
    responses: {
      200: {
        description:
          "The delivered steps: an SSE stream (`message`, `done`, `error` events) or, with stream=false, JSON",
        content: { "text/event-stream": { schema: z.string() }, "application/json": { schema: TurnResult } },
      },
      // A failed model turn (`bad-gateway`); not in the shared set, so listed with the 500's text.
      502: errorResponses[500],
    },
  },
);

export const getWebhookReceiverRoute = defineRuntimeRoute(
  { errors: [] },
  {
    method: "get",
    path: "/agents/webhooks",
    operationId: "getWebhookReceiver",
    responses: { 200: json(WebhookReceiverState, "The receiver switch and every subscription") },
  },
);

export const setWebhookReceiverEnabledRoute = defineRuntimeRoute(
  { errors: [400] },
  {
    method: "put",
    path: "/agents/webhooks/enabled",
    operationId: "setWebhookReceiverEnabled",
    request: { body: body(SetReceiverEnabledBody) },
    responses: { 200: json(WebhookReceiverState, "The receiver state") },
  },
);

export const createWebhookSubscriptionRoute = defineRuntimeRoute(
  { errors: [400, 409] },
  {
    method: "post",
    path: "/agents/webhook-subscriptions",
    operationId: "createWebhookSubscription",
    request: { body: body(CreateWebhookSubscriptionBody) },
    responses: {
      201: json(WebhookSubscription, "The new subscription"),
    },
  },
);

export const getWebhookSubscriptionRoute = defineRuntimeRoute(
  { errors: [404] },
  {
    method: "get",
    path: "/agents/webhook-subscriptions/{name}",
    operationId: "getWebhookSubscription",
    request: { params: nameParam },
    responses: { 200: json(WebhookSubscription, "The subscription") },
  },
);

export const updateWebhookSubscriptionRoute = defineRuntimeRoute(
  { errors: [400, 404] },
  {
    method: "patch",
    path: "/agents/webhook-subscriptions/{name}",
    operationId: "updateWebhookSubscription",
    request: { params: nameParam, body: body(UpdateWebhookSubscriptionBody) },
    responses: {
      200: json(WebhookSubscription, "The updated subscription"),
    },
  },
);

export const deleteWebhookSubscriptionRoute = defineRuntimeRoute(
  { errors: [404] },
  {
    method: "delete",
    path: "/agents/webhook-subscriptions/{name}",
    operationId: "deleteWebhookSubscription",
    request: { params: nameParam },
    responses: { 204: { description: "Deleted" } },
  },
);

export const listWebhookRunsRoute = defineRuntimeRoute(
  { errors: [404] },
  {
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
    responses: { 200: json(WebhookRunList, "Recent runs, newest first") },
  },
);

/**
 * The webhook receiver (spec "Runtime: webhook receiver"). Served by a plain handler on the hot
 * path (the body is read as it streams, capped at 1 MiB); registered here so the runtime's
 * OpenAPI document lists it.
 */
export const receiveWebhookRoute = defineRuntimeRoute(
  { errors: [400, 401, 403, 404, 413, 429] },
  {
    method: "post",
    path: "/agents/webhooks/{name}",
    operationId: "receiveWebhook",
    summary: "Receive a webhook",
    description:
      "Takes a JSON object (at most 1 MiB) from an external system for the named subscription. Checked in this order: receiver off (403), unknown name (404), subscription inactive (403), a deliver-only subscription that verifies no sender past its rate bound (429 with Retry-After), the subscription's verification (401), a delivery id seen in the last 24 h (200 with the first answer), body not a JSON object (400), event not subscribed (200 `ignored`), deliver-only (200 `delivered`), queue full (429 with Retry-After); otherwise the run is stored and answered 202 without waiting for it.",
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
    },
  },
);
