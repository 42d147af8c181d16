import { z } from "@hono/zod-openapi";
import { defineInternalRoute, type InternalRoute, jsonBody, jsonOk } from "../common/internal-route.ts";

const ReservedCall = z.object({
  principalType: z.string().min(1).max(32),
  principalId: z.string().min(1).max(128),
  provider: z.string().min(1).max(64),
  model: z.string().min(1).max(256),
  route: z.string().min(1).max(256),
});

export const SpendReserveRequest = z.object({
  orgId: z.string().min(1),
  projectId: z.string().min(1).optional(),
  estimatedMicroUsd: z.number().int().nonnegative(),
  requestId: z.string().optional(),
  /**
   * The call the hold is for. A reservation that is neither settled nor released before it
   * expires (its producer crashed mid-call) is settled at its estimate as a usage record of this call.
   */
  call: ReservedCall.optional(),
});
export type SpendReserveRequest = z.infer<typeof SpendReserveRequest>;

export const SpendReserveResponse = z.object({
  decision: z.enum(["allowed", "denied"]),
  /** Present when allowed. */
  reservationId: z.string().optional(),
  expiresAt: z.string().optional(),
  /** The limit that denied the call. */
  limitId: z.string().optional(),
  /** The project that limit is set on; absent for one on the whole organization. */
  limitProjectId: z.string().optional(),
  /** Smallest remaining amount across the limits that apply, after this reservation. */
  remainingMicroUsd: z.number().int().optional(),
  /** When denied: the limit's amount, period and the end of the current period (when it resets). */
  limitMicroUsd: z.number().int().optional(),
  period: z.enum(["daily", "monthly"]).optional(),
  resetsAt: z.string().optional(),
  /** Whether some limit applies to the organization and project (false: a caller may skip reserving for a while). */
  limited: z.boolean().optional(),
});
export type SpendReserveResponse = z.infer<typeof SpendReserveResponse>;

export const SpendSettleRequest = z.object({
  reservationId: z.string().min(1),
  costMicroUsd: z.number().int().nonnegative(),
});
export type SpendSettleRequest = z.infer<typeof SpendSettleRequest>;

export const SpendReleaseRequest = z.object({ reservationId: z.string().min(1) });
export type SpendReleaseRequest = z.infer<typeof SpendReleaseRequest>;

/**
 * Calls a producer already forwarded without reserving, because no limit applied to their scope
 * when it last asked. Each becomes an active reservation under the producer's id that holds
 * nothing against limits: settled by its usage event, or at its estimate when it expires.
 */
export const SpendOpenRequest = z.object({
  reservations: z
    .array(
      z.object({
        reservationId: z.string().min(1).max(64),
        orgId: z.string().min(1),
        projectId: z.string().min(1).optional(),
        estimatedMicroUsd: z.number().int().nonnegative(),
        requestId: z.string().optional(),
        call: ReservedCall,
      }),
    )
    .min(1)
    .max(1000),
});
export type SpendOpenRequest = z.infer<typeof SpendOpenRequest>;

/** Per recorded call, in request order: whether a limit now applies to its scope (then reserve again). */
export const SpendOpenResponse = z.object({
  items: z.array(z.object({ reservationId: z.string(), limited: z.boolean() })),
});
export type SpendOpenResponse = z.infer<typeof SpendOpenResponse>;

export const SpendReservationState = z.enum(["active", "settled", "released", "expired"]);
export const SpendReservationResponse = z.object({ reservationId: z.string(), state: SpendReservationState });
export type SpendReservationResponse = z.infer<typeof SpendReservationResponse>;

const audit = { service: "audit" } as const;

export const internalSpendReserveRoute = defineInternalRoute(audit, {
  method: "post",
  path: "/internal/spend/reserve",
  operationId: "internalSpendReserve",
  summary: "Reserve spend",
  description: "Holds an estimated amount before a model call; `denied` when it would pass a limit.",
  request: jsonBody(SpendReserveRequest, "The organization, project and estimate"),
  responses: jsonOk(SpendReserveResponse, "The decision and, when allowed, the reservation"),
});

export const internalSpendSettleRoute = defineInternalRoute(audit, {
  method: "post",
  path: "/internal/spend/settle",
  operationId: "internalSpendSettle",
  summary: "Settle a reservation",
  description: "Replaces the hold with the real cost after the call.",
  request: jsonBody(SpendSettleRequest, "The reservation and the real cost"),
  responses: jsonOk(SpendReservationResponse, "The reservation's state"),
});

export const internalSpendReleaseRoute = defineInternalRoute(audit, {
  method: "post",
  path: "/internal/spend/release",
  operationId: "internalSpendRelease",
  summary: "Release a reservation",
  description: "Drops the hold when the call never happened.",
  request: jsonBody(SpendReleaseRequest, "The reservation"),
  responses: jsonOk(SpendReservationResponse, "The reservation's state"),
});

export const internalSpendOpenRoute = defineInternalRoute(audit, {
  method: "post",
  path: "/internal/spend/open",
  operationId: "internalSpendOpen",
  summary: "Record unreserved calls",
  description:
    "Records calls already forwarded in scopes no limit applied to, as reservations holding nothing (a crash settles them at their estimate); says per call whether a limit applies now.",
  request: jsonBody(SpendOpenRequest, "The calls, with the producer's reservation ids"),
  responses: jsonOk(SpendOpenResponse, "Whether a limit now applies to each call's scope"),
});

/**
 * The spend decision API of audit-svc for the inference proxy, each exported by name above:
 * served with service-kit's `internalRoute`, called with `callInternal`. Amounts are integer
 * micro-USD. This list is for checks that walk them all.
 */
export const auditInternalRoutes: readonly InternalRoute[] = [
  internalSpendReserveRoute,
  internalSpendSettleRoute,
  internalSpendReleaseRoute,
  internalSpendOpenRoute,
];
