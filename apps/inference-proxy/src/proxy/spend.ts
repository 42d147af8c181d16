import {
  internalSpendOpenRoute,
  internalSpendReleaseRoute,
  internalSpendReserveRoute,
  type SpendOpenRequest,
  type SpendReserveRequest,
  type SpendReserveResponse,
} from "@agentplane/contracts";
import { eventId } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import { callInternal, type Logger, type ServiceClient, servicePrincipal } from "@agentplane/service-kit";
import { annotateSpan, inChildSpan } from "@agentplane/telemetry";
import type { CallerScope } from "./caller.ts";
import { GroupCommit } from "./group-commit.ts";
import { atMostSafe } from "./safe-amount.ts";
import type { UnseenInputHold } from "./unseen-input.ts";

const SELF = servicePrincipal("inference");

type ReservedCall = NonNullable<SpendReserveRequest["call"]>;
type OpenItem = SpendOpenRequest["reservations"][number];

/** A call's reservation: reserved before forwarding, or recorded in the background. */
export interface Hold {
  reservationId: string;
  /**
   * Told once the call has ended, before its usage event is written or its hold released: resolves
   * once audit has the reservation (true), or when it has none (false: nothing to release; the
   * usage event alone records the call, under `reservationId`). A call recorded in the background
   * that ends before its batch was sent needs no reservation any more: this takes it out of the
   * batch. Asking again gives the same answer.
   */
  ended(): Promise<boolean>;
}

const RESERVED = Promise.resolve(true);

export interface SpendGateOptions {
  /** How long "no limit applies to this org and project" is trusted without asking again (default 1 s). */
  unlimitedTtlMs?: number;
  /** Milliseconds on a monotonic clock (tests inject one); `performance.now` by default. */
  clock?: { now(): number };
  /**
   * How long a call forwarded without reserving waits for others before their batch is written
   * (default 20 ms): the write then runs beside the calls, once for all of them.
   */
  batchDelayMs?: number;
}

/**
 * The audit service's spend API. Where a limit applies, each call reserves its estimate before it
 * is forwarded (limits hold across replicas). Where audit answered that no limit applies, that
 * answer is trusted for `unlimitedTtlMs`: the call is forwarded at once and recorded in the
 * background, batched with the calls started meanwhile (one `/internal/spend/open` per batch),
 * as a reservation holding nothing; the answer to each batch renews or drops the trust per scope,
 * so a new limit applies from the next batch on, and after `unlimitedTtlMs` at the latest.
 */
export class SpendGate {
  private readonly audit: ServiceClient;
  private readonly logger: Logger;
  private readonly ttlMs: number;
  /** In the last part of a scope's trust, a call is recorded even when it ended, to renew it. */
  private readonly renewWithinMs: number;
  private readonly clock: { now(): number };
  /** Scope → clock reading until which "no limit applies" is trusted. */
  private readonly unlimited = new Map<string, number>();
  /** Calls forwarded without reserving, recorded in audit one batch at a time. */
  private readonly opens: GroupCommit<OpenItem, boolean>;
  /** Scopes with an ended call kept to renew their trust, until its batch is answered: one call does it. */
  private readonly renewing = new Set<string>();

  constructor(audit: ServiceClient, logger: Logger, options: SpendGateOptions = {}) {
    this.audit = audit;
    this.logger = logger;
    this.ttlMs = options.unlimitedTtlMs ?? 1000;
    this.renewWithinMs = this.ttlMs / 4;
    this.clock = options.clock ?? performance;
    this.opens = new GroupCommit((batch) => this.open(batch), { delayMs: options.batchDelayMs ?? 20 });
  }

  /**
   * Reserves (or, where no limit applies, records in the background) the call's estimate. A
   * reservation is a `spend.reserve` span of the current request; a call recorded in the
   * background costs no span, only `agentplane.spend.mode: deferred` on the current one.
   * `unseen`, the bound of input the body references but does not hold, is reserved on top of the
   * estimate where a limit applies, and is not recorded where none does: such a call is forwarded
   * there as any other (docs/decisions/0053-input-the-body-does-not-show.md).
   */
  async begin(
    scope: CallerScope,
    estimatedMicroUsd: number,
    requestId: string,
    call: ReservedCall,
    unseen?: UnseenInputHold,
  ): Promise<Hold> {
    const key = scopeKey(scope.orgId, scope.projectId);
    const until = this.unlimited.get(key);
    if (until !== undefined && until > this.clock.now()) {
      annotateSpan({ "agentplane.spend.mode": "deferred" });
      // Time-ordered (new rows at the right edge of the reservations key), and cheaper per call
      // than newId's randomBytes (eventId draws from randomUUID's buffered pool).
      const reservationId = `rsv_${eventId().replaceAll("-", "")}`;
      const item: OpenItem = { reservationId, orgId: scope.orgId, estimatedMicroUsd, requestId, call };
      item.projectId = scope.projectId;
      const opened = this.opens.add(item);
      let answer: Promise<boolean> | undefined;
      return { reservationId, ended: () => (answer ??= this.ended(key, item, opened)) };
    }
    const held = atMostSafe(estimatedMicroUsd + (unseen?.microUsd ?? 0));
    const attributes = {
      "agentplane.spend.mode": "reserved",
      "agentplane.spend.estimated_micro_usd": held,
    };
    const reservationId = await inChildSpan("spend.reserve", attributes, () =>
      this.reserve(scope, held, requestId, call, unseen?.members),
    );
    return { reservationId, ended: () => RESERVED };
  }

  /**
   * A call recorded in the background has ended. Still in its batch (not sent yet): taken out,
   * unless the scope's trust is due for renewal (the batch's answer renews it, so no call has to
   * reserve synchronously) and no other ended call of the scope is on its way for that already.
   */
  private ended(key: string, item: OpenItem, opened: Promise<boolean>): Promise<boolean> {
    const left = (this.unlimited.get(key) ?? 0) - this.clock.now();
    if (left > this.renewWithinMs || this.renewing.has(key)) this.opens.withdraw(item, false);
    else {
      this.renewing.add(key);
      const renewed = () => this.renewing.delete(key);
      opened.then(renewed, renewed);
    }
    return opened;
  }

  /**
   * Holds the estimate; over a limit → 429 `spending-limit-reached` naming the limit and its reset,
   * and the members (`unseenInput`) whose input the estimate holds at the model's context window.
   */
  async reserve(
    scope: CallerScope,
    estimatedMicroUsd: number,
    requestId: string,
    call?: ReservedCall,
    unseenInput?: string[],
  ): Promise<string> {
    const body: SpendReserveRequest = { orgId: scope.orgId, projectId: scope.projectId, estimatedMicroUsd, requestId };
    // Names the call, so a hold this process never settles (a crash) expires into a usage record of it.
    if (call) body.call = call;
    const r = await callInternal(this.audit, internalSpendReserveRoute, {
      principal: SELF,
      requestId,
      body,
    });
    this.learn(scope.orgId, scope.projectId, r.limited);
    if (r.decision === "allowed" && r.reservationId) return r.reservationId;
    throw limitReached(r, estimatedMicroUsd, unseenInput);
  }

  /** Best effort: a release that fails leaves the hold to expire in the audit service. */
  async release(hold: Hold | string, requestId: string): Promise<void> {
    const reservationId = typeof hold === "string" ? hold : hold.reservationId;
    if (typeof hold !== "string" && !(await hold.ended())) return;
    try {
      await inChildSpan("spend.release", {}, () =>
        callInternal(this.audit, internalSpendReleaseRoute, {
          principal: SELF,
          requestId,
          body: { reservationId },
        }),
      );
    } catch (err) {
      this.logger.warn({ reservationId, requestId, err: (err as Error).message }, "reservation not released");
    }
  }

  /** Waits until every call recorded so far reached audit (shutdown, tests). */
  drain(): Promise<void> {
    return this.opens.drain();
  }

  private learn(orgId: string, projectId: string | undefined, limited: boolean | undefined): void {
    const key = scopeKey(orgId, projectId);
    if (limited === false) {
      if (this.unlimited.size >= 100_000) this.unlimited.clear();
      this.unlimited.set(key, this.clock.now() + this.ttlMs);
    } else this.unlimited.delete(key);
  }

  /** One batch of calls forwarded without reserving; never rejects (false: not recorded). */
  private async open(batch: OpenItem[]): Promise<boolean[]> {
    try {
      const answer = await callInternal(this.audit, internalSpendOpenRoute, {
        principal: SELF,
        body: { reservations: batch },
      });
      for (const [i, item] of batch.entries()) this.learn(item.orgId, item.projectId, answer.items[i]?.limited);
      return batch.map(() => true);
    } catch (err) {
      // The calls run unrecorded until their usage event arrives (which still counts them).
      this.logger.warn({ calls: batch.length, err: (err as Error).message }, "unreserved calls not recorded");
      for (const item of batch) this.unlimited.delete(scopeKey(item.orgId, item.projectId));
      return batch.map(() => false);
    }
  }
}

const scopeKey = (orgId: string, projectId: string | undefined) => `${orgId}\u0000${projectId ?? ""}`;

/** USD for people: cents below a dollar keep up to four significant digits ($0.0123), else cents. */
function dollars(micro: number): string {
  const usd = micro / 1e6;
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${Number(usd.toPrecision(4))}`;
}

function limitReached(r: SpendReserveResponse, estimatedMicroUsd: number, unseenInput?: string[]): ProblemError {
  const resetsAt = r.resetsAt;
  const retryAfter = resetsAt ? Math.max(1, Math.ceil((Date.parse(resetsAt) - Date.now()) / 1000)) : undefined;
  const usd = (micro: number | undefined) => (micro === undefined ? undefined : micro / 1e6);
  const owner = r.limitProjectId ? `project ${r.limitProjectId}` : "this organization";
  const limit = `the ${r.period ?? ""} spending limit ${r.limitId ?? ""} of ${owner}`;
  // Some of the limit may remain: then it is this call's estimate (its max_tokens at the model's
  // output price) that does not fit, and a smaller max_tokens may; or the input it references
  // without holding it, which is estimated at the model's context window.
  const unseen = unseenInput?.length
    ? `, which holds the model's context window of input for ${unseenInput
        .slice(0, 4)
        .map((m) => m.slice(0, 80))
        .join(", ")}, input the body references but does not hold`
    : " (a lower max_tokens lowers the estimate)";
  const why =
    r.remainingMicroUsd !== undefined && r.remainingMicroUsd > 0
      ? `This call's estimated cost of ${dollars(estimatedMicroUsd)} exceeds the ${dollars(r.remainingMicroUsd)} that remains of ${limit}${unseen}`
      : `${limit[0]?.toUpperCase()}${limit.slice(1)} is reached`;
  return new ProblemError("spending-limit-reached", {
    detail: `${why}${resetsAt ? `; it resets at ${resetsAt}` : ""}. Sandboxes keep running.`.replace(/\s+/g, " "),
    // The limit does not clear in seconds: SDK clients that honour x-should-retry stop at once.
    headers: { "x-should-retry": "false", ...(retryAfter ? { "retry-after": String(retryAfter) } : {}) },
    extensions: {
      limitId: r.limitId,
      ...(r.period ? { period: r.period } : {}),
      ...(r.limitMicroUsd !== undefined ? { limitUsd: usd(r.limitMicroUsd) } : {}),
      ...(r.remainingMicroUsd !== undefined ? { remainingUsd: usd(r.remainingMicroUsd) } : {}),
      estimatedUsd: usd(estimatedMicroUsd),
      ...(unseenInput?.length ? { unseenInput } : {}),
      ...(resetsAt ? { resetsAt } : {}),
    },
  });
}
