import { z } from "@hono/zod-openapi";
import { defineRuntimeRoute } from "./define-route.ts";

/**
 * Event names of a thread's live stream. `message`: a message shown in the thread (the user's
 * message, a delivered turn step, a webhook, heartbeat or scheduled delivery; a ChatMessage).
 * `delta` `{step, text}`: model text as it streams. `step` `{step, messageId, delivered}`: a
 * stored step (not delivered with verbose off: clients drop its deltas). `tool_call`
 * `{step, id, name, input}` and `tool_result` `{step, id, name, content, isError}`: with verbose
 * on only.
 */
export const LIVE_EVENTS = ["message", "delta", "step", "tool_call", "tool_result"] as const;

/** A thread's stream past the runtime's bound on open streams (per thread and in all): 429 with Retry-After. */
export const followThreadRoute = defineRuntimeRoute(
  { errors: [404, 429] },
  {
    method: "get",
    path: "/agents/threads/{threadId}/events",
    operationId: "followThread",
    request: {
      params: z.object({
        threadId: z
          .string()
          .min(1)
          .openapi({ param: { name: "threadId", in: "path" } }),
      }),
      headers: z.object({
        "last-event-id": z
          .string()
          .regex(/^\d+$/, "an event id from this stream")
          .optional()
          .openapi({ description: "Resume: events after this id are replayed first" }),
      }),
    },
    responses: {
      200: {
        description:
          "Server-Sent Events: `id`, `event` (one of LIVE_EVENTS) and JSON `data`; a comment line every 15 s",
        content: { "text/event-stream": { schema: z.string() } },
      },
    },
  },
);
