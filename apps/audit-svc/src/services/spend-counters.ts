import type { AuditRecorded } from "@agentplane/contracts";
import { newId } from "@agentplane/contracts";
import { type Kysely, sql } from "kysely";
import type { AuditDb, SpendingLimitsTable } from "../db/schema.ts";
import { storeAuditRecords } from "./audit-records.ts";
import { periodOf } from "./time.ts";

// Limit counters of the spend ledger: which limits apply, their per-period counters (row-locked),
// and the alert and reached records written when spend crosses a threshold.

export type Limit = Pick<
  SpendingLimitsTable,
  "id" | "org_id" | "project_id" | "amount_micro_usd" | "period" | "alert_thresholds"
>;
export interface Counter {
  limit: Limit;
  periodStart: Date;
  spent: number;
  reserved: number;
  alerted: number;
  reached: boolean;
}

export function thresholdsOf(limit: Pick<Limit, "alert_thresholds">): number[] {
  const raw = limit.alert_thresholds as unknown;
  const list = (typeof raw === "string" ? JSON.parse(raw) : raw) as number[];
  return [...list].sort((a, b) => a - b);
}

/**
 * Limits that apply to spend of an organization, and of one of its projects when given. `share`
 * locks their rows (FOR SHARE) for the caller's transaction: a change of a limit (which locks its
 * row for update) then waits for the caller, or the caller reads the limit as changed.
 */
export async function applicableLimits(
  trx: Kysely<AuditDb>,
  orgId: string,
  projectId: string | null,
  options: { share?: boolean } = {},
): Promise<Limit[]> {
  let q = trx
    .selectFrom("spending_limits")
    .select(["id", "org_id", "project_id", "amount_micro_usd", "period", "alert_thresholds"])
    .where("org_id", "=", orgId);
  q = projectId
    ? q.where((eb) => eb.or([eb("project_id", "is", null), eb("project_id", "=", projectId)]))
    : q.where("project_id", "is", null);
  q = q.orderBy("id");
  return (options.share ? q.forShare() : q).execute();
}

/**
 * The usage recorded in a limit's scope in a period, in micro-USD: what a counter created for
 * that period starts from. A call held against another period of this limit is left out: its
 * hold counted it there (reserved before a period ended and reported after it, or reported with a
 * clock behind audit's), and counting it by its event time as well would count it twice.
 */
export async function recordedSpend(
  db: Kysely<AuditDb>,
  limit: Pick<Limit, "id" | "org_id" | "project_id">,
  period: { start: Date; end: Date },
): Promise<number> {
  let usage = db
    .selectFrom("usage_records as u")
    .select(sql<number>`coalesce(sum(u.cost_micro_usd), 0)::bigint`.as("spent"))
    .where("u.org_id", "=", limit.org_id)
    .where("u.ts", ">=", period.start.toISOString())
    .where("u.ts", "<", period.end.toISOString())
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("reservation_holds as h")
            .select(sql`1`.as("one"))
            .whereRef("h.reservation_id", "=", "u.reservation_id")
            .where("h.limit_id", "=", limit.id)
            .where("h.period_start", "!=", period.start),
        ),
      ),
    );
  if (limit.project_id) usage = usage.where("u.project_id", "=", limit.project_id);
  return Number((await usage.executeTakeFirstOrThrow()).spent);
}

/**
 * The counter of a limit for the period containing `at`, locked for this transaction. A counter
 * created mid-period starts from the usage already recorded in that period; `addOnConflict` is
 * added when it already exists (the caller's new usage rows are part of the initial sum).
 */
export async function lockCounter(trx: Kysely<AuditDb>, limit: Limit, at: Date, addOnConflict = 0): Promise<Counter> {
  const { start, end } = periodOf(limit.period, at);
  const select = () =>
    trx
      .selectFrom("spend_counters")
      .selectAll()
      .where("limit_id", "=", limit.id)
      .where("period_start", "=", start)
      .forUpdate()
      .executeTakeFirst();
  let row = await select();
  let add = addOnConflict;
  if (!row) {
    const initial = await recordedSpend(trx, limit, { start, end });
    // Another transaction may create the counter meanwhile: then its sum missed our rows, so add them.
    await trx
      .insertInto("spend_counters")
      .values({ limit_id: limit.id, period_start: start, spent_micro_usd: initial })
      .onConflict((oc) =>
        oc.columns(["limit_id", "period_start"]).doUpdateSet({
          spent_micro_usd: sql`spend_counters.spent_micro_usd + ${addOnConflict}`,
        }),
      )
      .execute();
    row = await select();
    add = 0;
  }
  if (!row) throw new Error(`spend counter of ${limit.id} vanished`);
  return {
    limit,
    periodStart: start,
    spent: Number(row.spent_micro_usd) + add,
    reserved: Number(row.reserved_micro_usd),
    alerted: row.alerted_threshold,
    reached: row.reached,
  };
}

export async function saveCounter(trx: Kysely<AuditDb>, c: Counter): Promise<void> {
  await trx
    .updateTable("spend_counters")
    .set({ spent_micro_usd: c.spent, reserved_micro_usd: c.reserved, alerted_threshold: c.alerted, reached: c.reached })
    .where("limit_id", "=", c.limit.id)
    .where("period_start", "=", c.periodStart)
    .execute();
}

const SELF = { type: "service" as const, id: "svc_audit", displayName: "audit" };

/** Records (as audit records, in the same transaction) a newly crossed alert threshold or a reached limit. */
export async function reportCrossings(trx: Kysely<AuditDb>, c: Counter): Promise<void> {
  const amount = Number(c.limit.amount_micro_usd);
  const events: AuditRecorded[] = [];
  const base = {
    orgId: c.limit.org_id,
    ...(c.limit.project_id ? { projectId: c.limit.project_id } : {}),
    principal: SELF,
    source: "domain" as const,
    targetType: "spending_limit",
    targetId: c.limit.id,
    targets: { orgId: c.limit.org_id, limitId: c.limit.id },
    outcome: "success" as const,
    time: new Date().toISOString(),
  };
  const details = {
    limitUsd: amount / 1e6,
    spentUsd: c.spent / 1e6,
    period: c.limit.period,
    periodStart: c.periodStart.toISOString(),
  };
  const crossed = thresholdsOf(c.limit).filter((t) => c.spent * 100 >= t * amount);
  const highest = crossed[crossed.length - 1] ?? 0;
  if (highest > c.alerted) {
    c.alerted = highest;
    events.push({
      ...base,
      id: newId("audit"),
      action: "spending_limit.threshold_crossed",
      details: { ...details, threshold: highest },
    });
  }
  if (!c.reached && c.spent >= amount) {
    c.reached = true;
    events.push({ ...base, id: newId("audit"), action: "spending_limit.reached", details });
  }
  if (events.length > 0) await storeAuditRecords(trx, events);
}

/**
 * A limit's period changed (`before` → `after`): the calls still holding money under it move onto
 * the counter of the new period that applies now, so each one ends (settles or releases) against
 * the counter that holds it, and the old period's counters keep nothing of them. Without this a
 * call ending after the change released its hold from a counter that never had it and counted its
 * cost in a past period of the new kind. Their reservations are locked first, as ending one does,
 * then the counters. Returns how many holds moved.
 */
export async function moveHoldsToPeriod(trx: Kysely<AuditDb>, before: Limit, after: Limit, now: Date): Promise<number> {
  const held = await trx
    .selectFrom("reservation_holds as h")
    .innerJoin("reservations as r", "r.id", "h.reservation_id")
    .select(["r.id", "r.amount_micro_usd", "h.period_start"])
    .where("h.limit_id", "=", before.id)
    .where("r.state", "=", "active")
    .orderBy("r.id")
    .forUpdate("r")
    .execute();
  if (held.length === 0) return 0;
  const target = await lockCounter(trx, after, now);
  const targetStart = target.periodStart.getTime();
  const byStart = new Map<number, { amount: number; ids: string[] }>();
  for (const h of held) {
    const start = new Date(h.period_start).getTime();
    // Held on the very row that applies now (a day that starts a month): nothing to move.
    if (start === targetStart) continue;
    const group = byStart.get(start) ?? { amount: 0, ids: [] };
    group.amount += Number(h.amount_micro_usd);
    group.ids.push(h.id);
    byStart.set(start, group);
  }
  if (byStart.size === 0) return 0;
  let moved = 0;
  for (const [start, group] of [...byStart].sort((a, b) => a[0] - b[0])) {
    const old = await lockCounter(trx, before, new Date(start));
    old.reserved = Math.max(0, old.reserved - group.amount);
    await saveCounter(trx, old);
    target.reserved += group.amount;
    await trx
      .updateTable("reservation_holds")
      .set({ period_start: target.periodStart })
      .where("limit_id", "=", before.id)
      .where("reservation_id", "in", group.ids)
      .execute();
    moved += group.ids.length;
  }
  await saveCounter(trx, target);
  return moved;
}
