import { AUDIT_INTERNAL_ROUTES, type SpendReserveRequest } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { callInternal, type Logger, type ServiceClient, servicePrincipal } from "@agentplane/service-kit";
import type { CallerScope } from "./caller.ts";

const SELF = servicePrincipal("inference");

/** The audit service's spend API: reserve before forwarding, release when nothing was produced. */
export class SpendGate {
  private readonly audit: ServiceClient;
  private readonly logger: Logger;

  constructor(audit: ServiceClient, logger: Logger) {
    this.audit = audit;
    this.logger = logger;
  }

  /** Holds the estimate; over a limit → 429 `spending-limit-reached` naming the limit and its reset. */
  async reserve(
    scope: CallerScope,
    estimatedMicroUsd: number,
    requestId: string,
    call?: SpendReserveRequest["call"],
  ): Promise<string> {
    const body: SpendReserveRequest = { orgId: scope.orgId, projectId: scope.projectId, estimatedMicroUsd, requestId };
    // Names the call, so a hold this process never settles (a crash) expires into a usage record of it.
    if (call) body.call = call;
    const r = await callInternal(this.audit, AUDIT_INTERNAL_ROUTES.reserve, {
      principal: SELF,
      requestId,
      body,
    });
    if (r.decision === "allowed" && r.reservationId) return r.reservationId;
    const resetsAt = r.resetsAt;
    const retryAfter = resetsAt ? Math.max(1, Math.ceil((Date.parse(resetsAt) - Date.now()) / 1000)) : undefined;
    const usd = (micro: number | undefined) => (micro === undefined ? undefined : micro / 1e6);
    throw new ProblemError("spending-limit-reached", {
      detail:
        `The ${r.period ?? ""} spending limit ${r.limitId ?? ""} of this organization is reached` +
        `${resetsAt ? `; model access resumes at ${resetsAt}` : ""}. Sandboxes keep running.`.replace(/\s+/g, " "),
      // The limit does not clear in seconds: SDK clients that honour x-should-retry stop at once.
      headers: { "x-should-retry": "false", ...(retryAfter ? { "retry-after": String(retryAfter) } : {}) },
      extensions: {
        limitId: r.limitId,
        ...(r.period ? { period: r.period } : {}),
        ...(r.limitMicroUsd !== undefined ? { limitUsd: usd(r.limitMicroUsd) } : {}),
        ...(r.remainingMicroUsd !== undefined ? { remainingUsd: usd(r.remainingMicroUsd) } : {}),
        ...(resetsAt ? { resetsAt } : {}),
      },
    });
  }

  /** Best effort: a release that fails leaves the hold to expire in the audit service. */
  async release(reservationId: string, requestId: string): Promise<void> {
    try {
      await callInternal(this.audit, AUDIT_INTERNAL_ROUTES.release, {
        principal: SELF,
        requestId,
        body: { reservationId },
      });
    } catch (err) {
      this.logger.warn({ reservationId, requestId, err: (err as Error).message }, "reservation not released");
    }
  }
}
