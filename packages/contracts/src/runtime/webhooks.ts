import { z } from "@hono/zod-openapi";

export const WEBHOOK_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;
export const DELIVERY_TARGETS = ["All channels", "Chat", "Team chat"] as const;
export const WEBHOOK_RUN_STATUSES = ["queued", "running", "delivered", "failed"] as const;
/** Accepted runs not yet started, per subscription; one more answers 429. */
export const MAX_PENDING_WEBHOOK_RUNS = 10;

/** Lowercases and turns spaces into hyphens; the result must still match the slug pattern. */
export function normalizeWebhookName(raw: string): string {
  return raw.trim().toLowerCase().replace(/\s+/g, "-");
}

const WebhookName = z
  .string()
  .max(100)
  .transform(normalizeWebhookName)
  .pipe(z.string().regex(WEBHOOK_NAME_PATTERN, "Must match [a-z0-9][a-z0-9_-]* after lowercasing"));

export const DeliveryTarget = z.enum(DELIVERY_TARGETS);

export const WebhookSubscription = z
  .object({
    name: z.string(),
    description: z.string(),
    events: z
      .string()
      .openapi({ description: "Comma-separated event types; empty accepts all", example: "push,issues" }),
    deliverTo: DeliveryTarget,
    deliverOnly: z.boolean(),
    prompt: z.string(),
    active: z.boolean(),
    endpoint: z.string().openapi({ example: "/agents/webhooks/ci-alerts" }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("WebhookSubscription");

export const CreateWebhookSubscriptionBody = z
  .object({
    name: WebhookName,
    description: z.string().max(2000).default(""),
    events: z.string().max(2000).default(""),
    deliverTo: DeliveryTarget.default("All channels"),
    deliverOnly: z.boolean().default(false),
    prompt: z.string().max(20_000).default(""),
    active: z.boolean().default(true),
  })
  .strict()
  .openapi("CreateWebhookSubscription");

export const UpdateWebhookSubscriptionBody = z
  .object({
    description: z.string().max(2000).optional(),
    events: z.string().max(2000).optional(),
    deliverTo: DeliveryTarget.optional(),
    deliverOnly: z.boolean().optional(),
    prompt: z.string().max(20_000).optional(),
    active: z.boolean().optional(),
  })
  .strict()
  .openapi("UpdateWebhookSubscription");

export const WebhookReceiverState = z
  .object({ enabled: z.boolean(), subscriptions: z.array(WebhookSubscription) })
  .openapi("WebhookReceiverState");

export const SetReceiverEnabledBody = z.object({ enabled: z.boolean() }).strict().openapi("SetReceiverEnabled");

export const WebhookRun = z
  .object({
    id: z.string(),
    subscription: z.string(),
    event: z.string(),
    status: z.enum(WEBHOOK_RUN_STATUSES),
    attempts: z.number().int(),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    error: z.string().nullable(),
  })
  .openapi("WebhookRun");

export const WebhookRunList = z.object({ items: z.array(WebhookRun) }).openapi("WebhookRunList");

export const WebhookReceiverAnswer = z
  .discriminatedUnion("status", [
    z.object({ status: z.literal("accepted"), event: z.string(), runId: z.string() }),
    z.object({ status: z.literal("delivered"), event: z.string() }),
    z.object({ status: z.literal("ignored"), event: z.string() }),
  ])
  .openapi("WebhookReceiverAnswer");

export type DeliveryTarget = z.infer<typeof DeliveryTarget>;
export type WebhookSubscription = z.infer<typeof WebhookSubscription>;
export type CreateWebhookSubscriptionBody = z.infer<typeof CreateWebhookSubscriptionBody>;
export type UpdateWebhookSubscriptionBody = z.infer<typeof UpdateWebhookSubscriptionBody>;
export type WebhookRun = z.infer<typeof WebhookRun>;
export type WebhookRunStatus = (typeof WEBHOOK_RUN_STATUSES)[number];
