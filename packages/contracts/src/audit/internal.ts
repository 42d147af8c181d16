import { z } from "@hono/zod-openapi";
import { defineInternalRoute, jsonBody, jsonOk } from "../common/internal-route.ts";

/**
 * The spend decision API of audit-svc for the inference proxy. Internal: service principals only,
 * never routed by the gateway. Amounts are integer micro-USD.
 */
export const AUDIT_INTERNAL = {
  /** POST: hold an estimated amount before a model call; `denied` when it would pass a limit. */
  reserve: "/internal/spend/reserve",
  /** POST: replace the hold with the real cost after the call. */
  settle: "/internal/spend/settle",
  /** POST: drop the hold when the call never happened. */
  release: "/internal/spend/release",
} as const;

export const SpendReserveRequest = z.object({
  orgId: z.string().min(1),
  projectId: z.string().min(1).optional(),
  estimatedMicroUsd: z.number().int().nonnegative(),
  requestId: z.string().optional(),
  /**
   * The call the hold is for. A reservation that is neither settled nor released before it
   * expires (its producer crashed mid-call) is settled at its estimate as a usage record of this call.
   */
  call: z
    .object({
      principalType: z.string().min(1).max(32),
      principalId: z.string().min(1).max(128),
      provider: z.string().min(1).max(64),
      model: z.string().min(1).max(256),
      route: z.string().min(1).max(256),
    })
    .optional(),
});
export type SpendReserveRequest = z.infer<typeof SpendReserveRequest>;

export const SpendReserveResponse = z.object({
  decision: z.enum(["allowed", "denied"]),
  /** Present when allowed. */
  reservationId: z.string().optional(),
  expiresAt: z.string().optional(),
  /** The limit that denied the call. */
  limitId: z.string().optional(),
  /** Smallest remaining amount across the limits that apply, after this reservation. */
  remainingMicroUsd: z.number().int().optional(),
  /** When denied: the limit's amount, period and the end of the current period (when it resets). */
  limitMicroUsd: z.number().int().optional(),
  period: z.enum(["daily", "monthly"]).optional(),
  resetsAt: z.string().optional(),
});
export type SpendReserveResponse = z.infer<typeof SpendReserveResponse>;

export const SpendSettleRequest = z.object({
  reservationId: z.string().min(1),
  costMicroUsd: z.number().int().nonnegative(),
});
export type SpendSettleRequest = z.infer<typeof SpendSettleRequest>;

export const SpendReleaseRequest = z.object({ reservationId: z.string().min(1) });
export type SpendReleaseRequest = z.infer<typeof SpendReleaseRequest>;

export const SpendReservationState = z.enum(["active", "settled", "released", "expired"]);
export const SpendReservationResponse = z.object({ reservationId: z.string(), state: SpendReservationState });
export type SpendReservationResponse = z.infer<typeof SpendReservationResponse>;

const audit = { service: "audit" } as const;

/** The spend API as contracts: served with service-kit's `internalRoute`, called with `callInternal`. */
export const AUDIT_INTERNAL_ROUTES = {
  reserve: defineInternalRoute(audit, {
    method: "post",
    path: AUDIT_INTERNAL.reserve,
    operationId: "internalSpendReserve",
    summary: "Reserve spend",
    description: "Holds an estimated amount before a model call; `denied` when it would pass a limit.",
    request: jsonBody(SpendReserveRequest, "The organization, project and estimate"),
    responses: jsonOk(SpendReserveResponse, "The decision and, when allowed, the reservation"),
  }),
  settle: defineInternalRoute(audit, {
    method: "post",
    path: AUDIT_INTERNAL.settle,
    operationId: "internalSpendSettle",
    summary: "Settle a reservation",
    description: "Replaces the hold with the real cost after the call.",
    request: jsonBody(SpendSettleRequest, "The reservation and the real cost"),
    responses: jsonOk(SpendReservationResponse, "The reservation's state"),
  }),
  release: defineInternalRoute(audit, {
    method: "post",
    path: AUDIT_INTERNAL.release,
    operationId: "internalSpendRelease",
    summary: "Release a reservation",
    description: "Drops the hold when the call never happened.",
    request: jsonBody(SpendReleaseRequest, "The reservation"),
    responses: jsonOk(SpendReservationResponse, "The reservation's state"),
  }),
};
