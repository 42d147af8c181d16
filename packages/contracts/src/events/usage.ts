import { z } from "@hono/zod-openapi";

export const USAGE_RECORDED = "usage.recorded";

/** One metered model call, published by the inference proxy. Cost is computed by the audit service. */
export const UsageRecordedSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  projectId: z.string().optional(),
  principalType: z.string(),
  principalId: z.string(),
  provider: z.string(),
  model: z.string(),
  route: z.string(),
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative().default(0),
  cacheWriteTokens: z.number().int().nonnegative().default(0),
  /** Set when the caller already knows the cost; otherwise priced from the price table. */
  costMicroUsd: z.number().int().nonnegative().optional(),
  requestId: z.string().optional(),
  /** Spending-limit reservation to settle with this usage. */
  reservationId: z.string().optional(),
  time: z.string(),
});
export type UsageRecorded = z.infer<typeof UsageRecordedSchema>;
