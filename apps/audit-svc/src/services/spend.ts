import {
  newId,
  type SpendOpenRequest,
  type SpendOpenResponse,
  type SpendReservationResponse,
  type SpendReserveRequest,
  type SpendReserveResponse,
} from "@agentplane/contracts";
import { notFound } from "@agentplane/problem-details";
import { type Kysely, type Selectable, sql } from "kysely";
import type { AuditDb, ReservationsTable } from "../db/schema.ts";
import {
  applicableLimits,
  type Counter,
  type Limit,
  lockCounter,
  reportCrossings,
  saveCounter,
} from "./spend-counters.ts";
import { openReservations } from "./spend-open.ts";
import { periodOf } from "./time.ts";

export { thresholdsOf } from "./spend-counters.ts";

/** The call a reservation holds money for (SpendReserveRequest.call). */
export type ReservedCall = NonNullable<SpendReserveRequest["call"]>;

/** The usage record written when a reservation expires: one per reservation, so counted once. */
export const expiryEventId = (reservationId: string) => `expired_${reservationId}`;

export interface SpendOptions {
  /** A reservation never settled or released is dropped after this long (default 10 minutes). */
  reservationTtlMs?: number;
}

/**
 * The spend decision API. All state is in Postgres: a reservation locks the counters of every
 * limit that applies (in limit id order) and is denied when spent + held + the estimate would pass
 * a limit, so concurrent replicas never overshoot through reservations; a settled cost above its
 * estimate can pass the limit by that one call, which the next reservation then sees.
 */
export class SpendLedger {
  private readonly db: Kysely<AuditDb>;
  private readonly ttlMs: number;

  constructor(db: Kysely<AuditDb>, options: SpendOptions = {}) {
    this.db = db;
    this.ttlMs = options.reservationTtlMs ?? 10 * 60_000;
  }

  async reserve(input: {
    orgId: string;
    projectId?: string | undefined;
    estimatedMicroUsd: number;
    requestId?: string | undefined;
    call?: ReservedCall | undefined;
  }): Promise<SpendReserveResponse> {
    const quick = await this.reserveUnlimited(input);
    if (quick) return quick;
    return this.db.transaction().execute(async (trx) => {
      // The limits stay as read until the holds are written: a period change waits, then moves
      // this call's holds with the others, instead of leaving them on the old period's counter.
      const limits = await applicableLimits(trx, input.orgId, input.projectId ?? null, { share: true });
      // Read once the limits are: a call that waited for a change is judged at the time it goes on.
      const now = new Date();
      const counters: Counter[] = [];
      for (const limit of limits) counters.push(await lockCounter(trx, limit, now));
      let remaining: number | undefined;
      for (const c of counters) {
        const amount = Number(c.limit.amount_micro_usd);
        const left = amount - c.spent - c.reserved - input.estimatedMicroUsd;
        if (left < 0 || c.spent >= amount) {
          // A limit lowered below what is already spent is reached now, not at the next settle.
          await reportCrossings(trx, c);
          await saveCounter(trx, c);
          return {
            decision: "denied" as const,
            limitId: c.limit.id,
            ...(c.limit.project_id ? { limitProjectId: c.limit.project_id } : {}),
            remainingMicroUsd: Math.max(0, amount - c.spent - c.reserved),
            limitMicroUsd: amount,
            period: c.limit.period,
            resetsAt: periodOf(c.limit.period, now).end.toISOString(),
            limited: true,
          };
        }
        remaining = remaining === undefined ? left : Math.min(remaining, left);
      }
      const id = newId("reservation");
      const expiresAt = new Date(now.getTime() + this.ttlMs);
      await trx
        .insertInto("reservations")
        .values({
          id,
          org_id: input.orgId,
          project_id: input.projectId ?? null,
          amount_micro_usd: input.estimatedMicroUsd,
          state: "active",
          settled_micro_usd: null,
          request_id: input.requestId ?? null,
          call: input.call ? JSON.stringify(input.call) : null,
          expires_at: expiresAt,
        })
        .execute();
      for (const c of counters) {
        c.reserved += input.estimatedMicroUsd;
        await saveCounter(trx, c);
      }
      if (counters.length > 0) {
        await trx
          .insertInto("reservation_holds")
          .values(counters.map((c) => ({ reservation_id: id, limit_id: c.limit.id, period_start: c.periodStart })))
          .execute();
      }
      return {
        decision: "allowed" as const,
        reservationId: id,
        expiresAt: expiresAt.toISOString(),
        ...(remaining !== undefined ? { remainingMicroUsd: remaining } : {}),
        limited: counters.length > 0,
      };
    });
  }

  /**
   * The common case in one statement: no limit applies to the org (and project), so the hold is
   * inserted without a transaction or a counter lock. Undefined when some limit applies (then the
   * locking path decides). A limit created while this runs treats the call as reserved just before.
   */
  private async reserveUnlimited(input: {
    orgId: string;
    projectId?: string | undefined;
    estimatedMicroUsd: number;
    requestId?: string | undefined;
    call?: ReservedCall | undefined;
  }): Promise<SpendReserveResponse | undefined> {
    const id = newId("reservation");
    const expiresAt = new Date(Date.now() + this.ttlMs);
    const projectId = input.projectId ?? null;
    const inserted = await this.db
      .insertInto("reservations")
      .columns(["id", "org_id", "project_id", "amount_micro_usd", "state", "request_id", "call", "expires_at"])
      .expression(
        this.db
          .selectNoFrom([
            sql<string>`${id}`.as("id"),
            sql<string>`${input.orgId}`.as("org_id"),
            sql<string | null>`${projectId}::text`.as("project_id"),
            sql<number>`${input.estimatedMicroUsd}::bigint`.as("amount_micro_usd"),
            sql<string>`'active'`.as("state"),
            sql<string | null>`${input.requestId ?? null}::text`.as("request_id"),
            sql<string | null>`${input.call ? JSON.stringify(input.call) : null}::jsonb`.as("call"),
            sql<Date>`${expiresAt.toISOString()}::timestamptz`.as("expires_at"),
          ])
          .where((eb) =>
            eb.not(
              eb.exists(
                this.db
                  .selectFrom("spending_limits")
                  .select(sql`1`.as("one"))
                  .where("org_id", "=", input.orgId)
                  .where((w) =>
                    projectId
                      ? w.or([w("project_id", "is", null), w("project_id", "=", projectId)])
                      : w("project_id", "is", null),
                  ),
              ),
            ),
          ),
      )
      .returning("id")
      .executeTakeFirst();
    if (!inserted) return undefined;
    return { decision: "allowed", reservationId: id, expiresAt: expiresAt.toISOString(), limited: false };
  }

  /** Records calls forwarded without a reservation (see openReservations). */
  open(input: SpendOpenRequest): Promise<SpendOpenResponse> {
    return openReservations(this.db, this.ttlMs, input);
  }

  settle(input: { reservationId: string; costMicroUsd: number }): Promise<SpendReservationResponse> {
    return this.db.transaction().execute((trx) => this.finish(trx, input.reservationId, "settled", input.costMicroUsd));
  }

  release(input: { reservationId: string }): Promise<SpendReservationResponse> {
    return this.db.transaction().execute((trx) => this.finish(trx, input.reservationId, "released", 0));
  }

  /**
   * Ends a reservation. Expiry settles it at its estimate (recorded as a usage record of the call).
   * Settling one that already ended still counts the call once: after a release its cost is
   * added; after an expiry the real cost replaces the estimate (the estimate's usage record is
   * removed and the counters move by the difference). Settling twice, or releasing after the end,
   * changes nothing.
   */
  async finish(
    trx: Kysely<AuditDb>,
    reservationId: string,
    to: "settled" | "released" | "expired",
    cost: number,
  ): Promise<SpendReservationResponse> {
    const r = await trx
      .selectFrom("reservations")
      .selectAll()
      .where("id", "=", reservationId)
      .forUpdate()
      .executeTakeFirst();
    if (!r) throw notFound("Reservation", reservationId);
    if (r.state !== "active") {
      if (to === "settled" && r.state !== "settled") {
        let charged = 0;
        if (r.state === "expired") {
          await trx.deleteFrom("usage_records").where("event_id", "=", expiryEventId(r.id)).execute();
          charged = Number(r.settled_micro_usd ?? 0);
        }
        await this.addSpend(trx, [
          { orgId: r.org_id, projectId: r.project_id, at: new Date(r.created_at), cost: cost - charged },
        ]);
        await trx
          .updateTable("reservations")
          .set({ state: "settled", settled_micro_usd: cost })
          .where("id", "=", r.id)
          .execute();
        return { reservationId, state: "settled" };
      }
      return { reservationId, state: r.state };
    }
    const holds = await trx
      .selectFrom("reservation_holds")
      .innerJoin("spending_limits", "spending_limits.id", "reservation_holds.limit_id")
      .select([
        "spending_limits.id",
        "spending_limits.org_id",
        "spending_limits.project_id",
        "spending_limits.amount_micro_usd",
        "spending_limits.period",
        "spending_limits.alert_thresholds",
        "reservation_holds.period_start",
      ])
      .where("reservation_holds.reservation_id", "=", r.id)
      .orderBy("spending_limits.id")
      .execute();
    for (const h of holds) {
      const c = await lockCounter(trx, h, new Date(h.period_start));
      c.reserved = Math.max(0, c.reserved - Number(r.amount_micro_usd));
      c.spent += cost;
      if (cost > 0) await reportCrossings(trx, c);
      await saveCounter(trx, c);
    }
    if (to === "expired" && cost > 0) await this.recordEstimate(trx, r, cost);
    // A hold on nothing (no limit applied when the call started) still counts toward the limits
    // that apply now, e.g. one created while the call ran: usage is never missed by a counter.
    if (holds.length === 0 && cost > 0) await this.countUnheld(trx, r, cost);
    await trx
      .updateTable("reservations")
      .set({ state: to, settled_micro_usd: to === "released" ? null : cost })
      .where("id", "=", r.id)
      .execute();
    return { reservationId, state: to };
  }

  /** Adds the cost of a reservation that held nothing to the limits that apply now (none: one query). */
  private async countUnheld(trx: Kysely<AuditDb>, r: Selectable<ReservationsTable>, cost: number) {
    const limits = await applicableLimits(trx, r.org_id, r.project_id);
    if (limits.length === 0) return;
    const at = new Date(r.created_at);
    const recorded = await trx
      .selectFrom("usage_records")
      .select("event_id")
      .where("reservation_id", "=", r.id)
      .executeTakeFirst();
    // Its usage record is stored already (usage event, expiry): addSpend counts it exactly once.
    if (recorded) return this.addSpend(trx, [{ orgId: r.org_id, projectId: r.project_id, at, cost }]);
    for (const limit of limits) {
      const c = await lockCounter(trx, limit, at);
      c.spent += cost;
      await reportCrossings(trx, c);
      await saveCounter(trx, c);
    }
  }

  /** The usage record of an expired reservation: its call, at the estimate, dated when it was reserved. */
  private async recordEstimate(trx: Kysely<AuditDb>, r: Selectable<ReservationsTable>, cost: number) {
    const raw = r.call as unknown;
    const call = (typeof raw === "string" ? JSON.parse(raw) : (raw ?? {})) as Partial<ReservedCall>;
    await trx
      .insertInto("usage_records")
      .values({
        event_id: expiryEventId(r.id),
        org_id: r.org_id,
        project_id: r.project_id,
        principal_type: call.principalType ?? "service",
        principal_id: call.principalId ?? "unknown",
        provider: call.provider ?? "unknown",
        model: call.model ?? "unknown",
        route: call.route ?? "unknown",
        input_tokens: 0,
        output_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        cost_micro_usd: cost,
        priced: true,
        request_id: r.request_id,
        reservation_id: r.id,
        ts: new Date(r.created_at).toISOString(),
      })
      .onConflict((oc) => oc.column("event_id").doNothing())
      .execute();
  }

  /**
   * Adds recorded spend (already inserted into usage_records) to the counters of the limits that
   * apply. Grouped per counter so that a counter created now, whose initial sum already includes
   * these rows, is not incremented again.
   */
  async addSpend(trx: Kysely<AuditDb>, items: { orgId: string; projectId: string | null; at: Date; cost: number }[]) {
    const groups = new Map<string, { limit: Limit; at: Date; cost: number }>();
    const limitsByScope = new Map<string, Limit[]>();
    for (const item of items) {
      const scope = `${item.orgId}\u0000${item.projectId ?? ""}`;
      let limits = limitsByScope.get(scope);
      if (!limits) {
        limits = await applicableLimits(trx, item.orgId, item.projectId);
        limitsByScope.set(scope, limits);
      }
      for (const limit of limits) {
        const key = `${limit.id}\u0000${periodOf(limit.period, item.at).start.toISOString()}`;
        const g = groups.get(key) ?? { limit, at: item.at, cost: 0 };
        g.cost += item.cost;
        groups.set(key, g);
      }
    }
    const ordered = [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    for (const [, g] of ordered) {
      const c = await lockCounter(trx, g.limit, g.at, g.cost);
      await reportCrossings(trx, c);
      await saveCounter(trx, c);
    }
  }

  /**
   * Settles reservations past their expiry at their estimate (run by the maintenance job): their
   * producer never reported, so the call may have run in full; a late report replaces the estimate.
   * `now` is the clock reading expiry is judged against.
   */
  async expire(now: Date = new Date(), batch = 500): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const due = await trx
        .selectFrom("reservations")
        .select(["id", "amount_micro_usd"])
        .where("state", "=", "active")
        .where("expires_at", "<", now)
        .orderBy("expires_at")
        .limit(batch)
        .forUpdate()
        .skipLocked()
        .execute();
      for (const r of due) await this.finish(trx, r.id, "expired", Number(r.amount_micro_usd));
      return due.length;
    });
  }
}
