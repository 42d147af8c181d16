import { z } from "@hono/zod-openapi";
import { Timestamp } from "../common/schemas.ts";
import { defineRuntimeRoute } from "./define-route.ts";

// The runtime's own usage (docs/decisions/0018-runtime-usage.md): its model calls and the audio
// of its voice meetings, kept in the runtime's database. The control plane's usage costs
// (`/v1/orgs/{orgId}/usage-costs`) count what went through the gateway; this counts what one
// runtime did, whichever way its calls went.

/** What started the work: a chat turn in the web UI or API, team chat, a webhook, a schedule, a heartbeat, a voice meeting. */
export const RUNTIME_USAGE_SOURCES = [
  "web",
  "team_chat",
  "webhook",
  "schedule",
  "heartbeat",
  "voice",
  "other",
] as const;
export type RuntimeUsageSource = (typeof RUNTIME_USAGE_SOURCES)[number];

export const RUNTIME_USAGE_GROUPS = ["day", "model", "source"] as const;
export type RuntimeUsageGroupBy = (typeof RUNTIME_USAGE_GROUPS)[number];

/** Without `from`, the window starts this many days before `to`. */
export const DEFAULT_USAGE_WINDOW_DAYS = 30;

export const RuntimeUsageQuery = z.object({
  from: Timestamp.optional().openapi({
    param: { name: "from", in: "query" },
    description: `Inclusive start (RFC 3339); default ${DEFAULT_USAGE_WINDOW_DAYS} days before \`to\``,
  }),
  to: Timestamp.optional().openapi({
    param: { name: "to", in: "query" },
    description: "Exclusive end (RFC 3339); default now",
  }),
  groupBy: z
    .enum(RUNTIME_USAGE_GROUPS)
    .default("day")
    .openapi({
      param: { name: "groupBy", in: "query" },
      description:
        "`day` (UTC days, oldest first), `model` (the model id asked for; a voice session counts under its realtime model and its transcription model) or `source` (what started the work)",
    }),
});

const UsageFigures = {
  modelCalls: z.number().int().describe("Model calls of chat turns, compaction and the heartbeat gate"),
  voiceSessions: z.number().int().describe("Voice meeting sessions that were admitted to a call"),
  inputTokens: z.number().int().describe("Uncached input tokens (model calls and the realtime model)"),
  outputTokens: z.number().int().describe("Output tokens (model calls and the realtime model)"),
  cacheReadTokens: z.number().int().describe("Input tokens read from the prompt cache"),
  cacheWriteTokens: z.number().int().describe("Input tokens written to the prompt cache"),
  costMicroUsd: z
    .number()
    .int()
    .describe("Cost in millionths of a US dollar at the bundled list prices, of what has a known price"),
  costUsd: z.number().describe("`costMicroUsd` in US dollars"),
  unpriced: z
    .number()
    .int()
    .describe("Model calls and voice sessions whose model has no known price: not in the cost, which is then a floor"),
  audioInputMinutes: z.number().describe("Minutes of meeting audio streamed to the realtime model"),
  audioOutputMinutes: z.number().describe("Minutes of the realtime model's audio played into meetings"),
  transcriptionMinutes: z.number().describe("Minutes of audio transcribed (every minute streamed is transcribed)"),
};

export const RuntimeUsageFigures = z.object(UsageFigures).openapi("RuntimeUsageFigures");

export const RuntimeUsage = z
  .object({
    from: z.string().describe("Start of the window (inclusive, RFC 3339)"),
    to: z.string().describe("End of the window (exclusive, RFC 3339)"),
    groupBy: z.enum(RUNTIME_USAGE_GROUPS).describe("How `groups` are keyed"),
    total: RuntimeUsageFigures.describe("Everything in the window"),
    groups: z
      .array(
        z
          .object({
            key: z.string().describe("The day (`2026-11-28`), the model id or the source"),
            ...UsageFigures,
          })
          .openapi("RuntimeUsageGroup"),
      )
      .describe("Days oldest first; models and sources dearest first"),
  })
  .openapi("RuntimeUsage");

export const getRuntimeUsageRoute = defineRuntimeRoute(
  { errors: [400] },
  {
    method: "get",
    path: "/agents/usage",
    operationId: "getRuntimeUsage",
    tags: ["Usage"],
    summary: "The runtime's model tokens, cost and meeting audio minutes over a window",
    description:
      "Model calls (tokens, cost at the bundled list prices where known) and voice meetings (audio minutes in and out, transcription minutes, realtime tokens) recorded by this runtime, totalled and grouped by day, model or source. A `from` after `to` is a 400.",
    request: { query: RuntimeUsageQuery },
    responses: {
      200: { description: "Totals and groups", content: { "application/json": { schema: RuntimeUsage } } },
    },
  },
);

export type RuntimeUsage = z.infer<typeof RuntimeUsage>;
export type RuntimeUsageFigures = z.infer<typeof RuntimeUsageFigures>;
export type RuntimeUsageGroup = RuntimeUsage["groups"][number];
