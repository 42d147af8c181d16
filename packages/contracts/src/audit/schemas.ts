import { z } from "@hono/zod-openapi";
import { Timestamp } from "../common/schemas.ts";
import { AuditOutcomeSchema } from "../events/audit.ts";

/** Timestamps of audit records carry microseconds: `2026-01-01T00:00:00.000123Z`. */
export const AuditTimestamp = z.string().openapi({ example: "2026-01-01T12:00:00.000123Z" });

export const AuditRecordSchema = z
  .object({
    id: z.string().openapi({ description: "The event id the producer assigned" }),
    time: AuditTimestamp.openapi({ description: "Unique within the organization; the pagination key" }),
    occurredAt: z.string().openapi({ description: "The time the producer gave the event" }),
    orgId: z.string().optional(),
    projectId: z.string().optional(),
    principal: z.object({ type: z.string(), id: z.string().optional(), displayName: z.string().optional() }),
    action: z.string(),
    source: z.enum(["request", "domain"]),
    targetType: z.string().optional(),
    targetId: z.string().optional(),
    targets: z.record(z.string(), z.string()),
    outcome: AuditOutcomeSchema,
    status: z.number().int().optional(),
    requestId: z.string().optional(),
    ip: z.string().optional(),
    userAgent: z.string().optional(),
    method: z.string().optional(),
    path: z.string().optional(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi("AuditRecord");
export type AuditRecord = z.infer<typeof AuditRecordSchema>;

const WindowQuery = {
  from: Timestamp.optional().openapi({ description: "Inclusive start (RFC 3339, e.g. 2026-11-01T00:00:00Z)" }),
  to: Timestamp.optional().openapi({ description: "Exclusive end (RFC 3339)" }),
};

export const AuditTrailQuery = z.object({
  actor: z.string().max(200).optional().openapi({ description: "Principal id" }),
  action: z.string().max(200).optional(),
  targetType: z.string().max(100).optional(),
  targetId: z.string().max(200).optional(),
  outcome: AuditOutcomeSchema.optional(),
  ...WindowQuery,
  cursor: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ description: "The `nextCursor` of the previous page: records strictly older than it" }),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

export const AuditTrailPage = z
  .object({
    items: z.array(AuditRecordSchema),
    nextCursor: AuditTimestamp.optional().openapi({ description: "Absent on the last page" }),
  })
  .openapi("AuditTrailPage");

export const AuditStatsQuery = z.object(WindowQuery);

const Count = z.object({ key: z.string(), count: z.number().int() });
export const AuditTrailStats = z
  .object({
    from: z.string(),
    to: z.string(),
    total: z.number().int(),
    byAction: z.array(Count).describe("Record counts per action, largest first"),
    byOutcome: z.array(Count).describe("Record counts per outcome"),
    byActorType: z.array(Count).describe("Record counts per principal type"),
  })
  .openapi("AuditTrailStats");

export const BucketIntervalSchema = z.enum(["hour", "day"]);
export type BucketInterval = z.infer<typeof BucketIntervalSchema>;
export const MAX_TIMESERIES_BUCKETS = 1000;

export const AuditTimeseriesQuery = z.object({ interval: BucketIntervalSchema.default("hour"), ...WindowQuery });

export const AuditTrailTimeseries = z
  .object({
    interval: BucketIntervalSchema,
    from: z.string(),
    to: z.string(),
    buckets: z.array(
      z.object({
        start: z.string().describe("Start of the bucket (RFC 3339)"),
        count: z.number().int(),
        denied: z.number().int(),
        error: z.number().int(),
      }),
    ),
  })
  .openapi("AuditTrailTimeseries");

export const UsageGroupBySchema = z.enum(["project", "model", "provider", "day"]);
export type UsageGroupBy = z.infer<typeof UsageGroupBySchema>;

export const UsageCostsQuery = z.object({ groupBy: UsageGroupBySchema.default("model"), ...WindowQuery });

const UsageTotals = {
  requests: z.number().int(),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  cacheReadTokens: z.number().int(),
  cacheWriteTokens: z.number().int(),
  costMicroUsd: z.number().int(),
  costUsd: z.number(),
  fallbackPricedRequests: z
    .number()
    .int()
    .describe(
      "Requests to models absent from the price table, charged as the dearest model of their provider family (never at zero)",
    ),
};

export const UsageCosts = z
  .object({
    from: z.string(),
    to: z.string(),
    groupBy: UsageGroupBySchema,
    total: z.object(UsageTotals),
    groups: z.array(z.object({ key: z.string().nullable(), ...UsageTotals })),
  })
  .openapi("UsageCosts");

export const UsageTimeseriesQuery = z.object({
  interval: BucketIntervalSchema.default("day"),
  projectId: z.string().max(64).optional(),
  ...WindowQuery,
});

export const UsageCostTimeseries = z
  .object({
    interval: BucketIntervalSchema,
    from: z.string(),
    to: z.string(),
    buckets: z.array(
      z.object({
        start: z.string().describe("Start of the bucket (RFC 3339)"),
        requests: z.number().int(),
        costMicroUsd: z.number().int(),
        costUsd: z.number(),
      }),
    ),
  })
  .openapi("UsageCostTimeseries");

export const SpendingPeriodSchema = z.enum(["monthly", "daily"]);
export type SpendingPeriod = z.infer<typeof SpendingPeriodSchema>;

// Limits are kept in millionths of a dollar: a positive amount smaller than that would be stored as
// a limit of 0, which refuses every model call.
const AmountUsd = z
  .number()
  .min(0)
  .max(1_000_000_000)
  .refine(
    (usd) => usd === 0 || Math.round(usd * 1e6) > 0,
    "At least 0.000001 (a millionth of a dollar), or 0 to refuse every model call",
  )
  .openapi({
    example: 500,
    description: "The limit in US dollars: 0 refuses every model call, a positive amount is at least 0.000001",
  });
const Thresholds = z
  .array(z.number().int().min(1).max(100))
  .max(10)
  .refine((t) => new Set(t).size === t.length, "thresholds must be distinct")
  .openapi({ description: "Percentages of the amount that produce an alert (audit record) when crossed" });

export const SpendingLimitSchema = z
  .object({
    id: z.string(),
    orgId: z.string(),
    projectId: z.string().nullable(),
    amountUsd: z.number(),
    period: SpendingPeriodSchema,
    alertThresholds: z.array(z.number().int()),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("SpendingLimit");
export type SpendingLimit = z.infer<typeof SpendingLimitSchema>;

export const CreateSpendingLimitBody = z
  .object({
    amountUsd: AmountUsd,
    period: SpendingPeriodSchema.default("monthly"),
    projectId: z.string().min(1).max(64).optional(),
    alertThresholds: Thresholds.default([80]),
  })
  .strict()
  .openapi("CreateSpendingLimit");

export const UpdateSpendingLimitBody = z
  .object({
    amountUsd: AmountUsd.optional(),
    period: SpendingPeriodSchema.optional(),
    alertThresholds: Thresholds.optional(),
  })
  .strict()
  .openapi("UpdateSpendingLimit");

export const SpendingLimitList = z.object({ items: z.array(SpendingLimitSchema) }).openapi("SpendingLimitList");

export const SpendingStateSchema = z.enum(["ok", "warning", "exceeded"]);

export const SpendingLimitStatusSchema = z
  .object({
    limitId: z.string(),
    projectId: z.string().nullable(),
    period: SpendingPeriodSchema,
    periodStart: z.string(),
    periodEnd: z.string(),
    limitUsd: z.number(),
    spentUsd: z.number(),
    reservedUsd: z.number().openapi({ description: "Held by model calls in flight" }),
    remainingUsd: z.number(),
    state: SpendingStateSchema,
  })
  .openapi("SpendingLimitStatus");

export const SpendingLimitStatusList = z
  .object({ items: z.array(SpendingLimitStatusSchema) })
  .openapi("SpendingLimitStatusList");
