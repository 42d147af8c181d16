import { z } from "@hono/zod-openapi";
import { normalizeWebhookName, WEBHOOK_NAME_PATTERN, WEBHOOK_NAME_RULE } from "./webhook-name.ts";

export { normalizeWebhookName, WEBHOOK_NAME_PATTERN, WEBHOOK_NAME_RULE };
export const DELIVERY_TARGETS = ["All channels", "Chat", "Team chat"] as const;
export const WEBHOOK_RUN_STATUSES = ["queued", "running", "delivered", "failed"] as const;
/** Accepted runs not yet started, per subscription; one more answers 429. */
export const MAX_PENDING_WEBHOOK_RUNS = 10;

const WebhookName = z
  .string()
  .max(100)
  .transform(normalizeWebhookName)
  .pipe(z.string().regex(WEBHOOK_NAME_PATTERN, WEBHOOK_NAME_RULE));

export const DeliveryTarget = z.enum(DELIVERY_TARGETS);

/**
 * Per-subscription verification of deliveries (our addition; `none` by default): GitHub's
 * `X-Hub-Signature-256` HMAC of the body, GitLab's `X-Gitlab-Token`, PagerDuty v3's
 * `X-PagerDuty-Signature` (`v1=` HMACs of the body, several during a secret rotation), a generic
 * HMAC-SHA256 of `<timestamp>.<body>` in a header of your choice with the timestamp in another, or a
 * shared bearer secret. A failed check answers 401 and runs nothing.
 */
export const VERIFICATION_KINDS = ["none", "github", "gitlab", "pagerduty", "hmac", "bearer"] as const;
export const DEFAULT_SIGNATURE_HEADER = "X-Signature";
export const DEFAULT_TIMESTAMP_HEADER = "X-Timestamp";
export const DEFAULT_TIMESTAMP_TOLERANCE_SECONDS = 300;
const HeaderName = z
  .string()
  .max(100)
  .regex(/^[A-Za-z0-9-]+$/, "A header name: letters, digits and hyphens");

export const WebhookVerification = z
  .object({
    kind: z.enum(VERIFICATION_KINDS),
    /** The secret itself is never returned. */
    secretSet: z.boolean(),
    signatureHeader: z.string(),
    timestampHeader: z.string(),
    toleranceSeconds: z.number().int(),
  })
  .openapi("WebhookVerification");

export const WebhookVerificationInput = z
  .object({
    kind: z.enum(VERIFICATION_KINDS),
    /** Required with any kind but `none` unless one is already stored; kept when omitted. */
    secret: z.string().min(8, "At least 8 characters").max(500).optional(),
    signatureHeader: HeaderName.optional(),
    timestampHeader: HeaderName.optional(),
    toleranceSeconds: z.number().int().min(1).max(3600).optional(),
  })
  .strict()
  .openapi("WebhookVerificationInput");

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
    verification: WebhookVerification,
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
    verification: WebhookVerificationInput.optional(),
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
    verification: WebhookVerificationInput.optional(),
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
export type VerificationKind = (typeof VERIFICATION_KINDS)[number];
export type WebhookVerificationInput = z.infer<typeof WebhookVerificationInput>;
export type WebhookSubscription = z.infer<typeof WebhookSubscription>;
export type CreateWebhookSubscriptionBody = z.infer<typeof CreateWebhookSubscriptionBody>;
export type UpdateWebhookSubscriptionBody = z.infer<typeof UpdateWebhookSubscriptionBody>;
export type WebhookRun = z.infer<typeof WebhookRun>;
export type WebhookRunStatus = (typeof WEBHOOK_RUN_STATUSES)[number];
