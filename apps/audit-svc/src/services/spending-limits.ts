import { newId, type SpendingLimit } from "@agentplane/contracts";
import { isUniqueViolation } from "@agentplane/db";
import { type DomainEventContext, recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { notFound, ProblemError } from "@agentplane/problem-details";
import type { Caller } from "@agentplane/service-kit";
import { type Kysely, sql, type Transaction } from "kysely";
import type { AuditDb, SpendingLimitsTable } from "../db/schema.ts";
import { thresholdsOf } from "./spend.ts";
import { moveHoldsToPeriod, recordedSpend } from "./spend-counters.ts";
import { periodOf } from "./time.ts";

type Row = SpendingLimitsTable & { created_at: Date; updated_at: Date };

/** What the spending-limit writes need: the database, and the outbox their domain events go to. */
export type SpendingLimitsContext = DomainEventContext<AuditDb>;

/** The domain event of a spending-limit write, in the transaction of the change. */
function recordLimitEvent(
  ctx: SpendingLimitsContext,
  trx: Transaction<AuditDb>,
  caller: Caller,
  action: string,
  row: Row,
  details?: Record<string, unknown>,
) {
  return recordDomainEvent(ctx, trx, caller.principal, {
    action,
    orgId: row.org_id,
    ...(row.project_id ? { projectId: row.project_id } : {}),
    targetType: "spending_limit",
    targetId: row.id,
    ...(details ? { details } : {}),
    requestId: caller.requestId,
  });
}

const toMicro = (usd: number) => Math.round(usd * 1e6);

function toLimit(r: Row): SpendingLimit {
  return {
    id: r.id,
    orgId: r.org_id,
    projectId: r.project_id,
    amountUsd: Number(r.amount_micro_usd) / 1e6,
    period: r.period,
    alertThresholds: thresholdsOf(r),
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
  };
}

type Period = "monthly" | "daily";

/** The limit that holds a scope (the organization, or one project) and period, if any. */
function limitOfScope(db: Kysely<AuditDb>, orgId: string, projectId: string | null, period: Period) {
  let q = db.selectFrom("spending_limits").select("id").where("org_id", "=", orgId).where("period", "=", period);
  q = projectId ? q.where("project_id", "=", projectId) : q.where("project_id", "is", null);
  return q.executeTakeFirst();
}

/**
 * One limit per scope and period (the unique index `spending_limits_scope`): a second would leave
 * it ambiguous which one applies. The answer names the one that holds it, to change instead.
 */
async function scopeTaken(
  db: Kysely<AuditDb>,
  orgId: string,
  projectId: string | null,
  period: Period,
): Promise<ProblemError> {
  const existing = await limitOfScope(db, orgId, projectId, period);
  const scope = projectId ? `project ${projectId}` : "the organization";
  return new ProblemError("conflict", {
    detail: existing
      ? `A ${period} spending limit for ${scope} exists already (${existing.id}); edit that one instead`
      : `A ${period} spending limit for ${scope} exists already`,
    ...(existing ? { extensions: { existingLimitId: existing.id } } : {}),
  });
}

export async function createSpendingLimit(
  ctx: SpendingLimitsContext,
  caller: Caller,
  input: { amountUsd: number; period: Period; projectId?: string | undefined; alertThresholds: number[] },
): Promise<SpendingLimit> {
  const projectId = input.projectId ?? null;
  const row = await withDomainEvents(ctx, async (trx) => {
    // A concurrent create of the same scope waits on the index, then inserts nothing.
    const inserted = await trx
      .insertInto("spending_limits")
      .values({
        id: newId("spendingLimit"),
        org_id: caller.orgId,
        project_id: projectId,
        amount_micro_usd: toMicro(input.amountUsd),
        period: input.period,
        alert_thresholds: sortedThresholds(input.alertThresholds),
      })
      .onConflict((oc) => oc.doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!inserted) throw await scopeTaken(trx, caller.orgId, projectId, input.period);
    await recordLimitEvent(ctx, trx, caller, "spending_limit.created", inserted as Row, {
      amountUsd: input.amountUsd,
      period: input.period,
    });
    return inserted;
  });
  return toLimit(row as Row);
}

export async function listSpendingLimits(db: Kysely<AuditDb>, orgId: string): Promise<SpendingLimit[]> {
  const rows = await db.selectFrom("spending_limits").selectAll().where("org_id", "=", orgId).orderBy("id").execute();
  return rows.map((r) => toLimit(r as Row));
}

export async function getSpendingLimit(db: Kysely<AuditDb>, orgId: string, limitId: string): Promise<SpendingLimit> {
  const row = await db
    .selectFrom("spending_limits")
    .selectAll()
    .where("org_id", "=", orgId)
    .where("id", "=", limitId)
    .executeTakeFirst();
  if (!row) throw notFound("Spending limit", limitId);
  return toLimit(row as Row);
}

/**
 * Changing the amount or thresholds re-bases the alert state of the current period without
 * reporting: crossings already past under the new settings are not announced again.
 */
export async function updateSpendingLimit(
  ctx: SpendingLimitsContext,
  caller: Caller,
  {
    limitId,
    ...input
  }: {
    limitId: string;
    amountUsd?: number | undefined;
    period?: Period | undefined;
    alertThresholds?: number[] | undefined;
  },
): Promise<SpendingLimit> {
  try {
    return await updateLimitRow(ctx, caller, limitId, input);
  } catch (err) {
    // A new period that another limit of the same scope holds already.
    if (!isUniqueViolation(err) || !input.period) throw err;
    const limit = await getSpendingLimit(ctx.db, caller.orgId, limitId);
    throw await scopeTaken(ctx.db, caller.orgId, limit.projectId ?? null, input.period);
  }
}

const sortedThresholds = (t: number[]) => JSON.stringify([...t].sort((a, b) => a - b));

function changesLimit(
  row: Row,
  input: { amountUsd?: number | undefined; period?: Period | undefined; alertThresholds?: number[] | undefined },
): boolean {
  return (
    (input.amountUsd !== undefined && toMicro(input.amountUsd) !== Number(row.amount_micro_usd)) ||
    (input.period !== undefined && input.period !== row.period) ||
    (input.alertThresholds !== undefined &&
      sortedThresholds(input.alertThresholds) !== JSON.stringify(thresholdsOf(row)))
  );
}

function updateLimitRow(
  ctx: SpendingLimitsContext,
  caller: Caller,
  limitId: string,
  input: { amountUsd?: number | undefined; period?: Period | undefined; alertThresholds?: number[] | undefined },
): Promise<SpendingLimit> {
  return withDomainEvents(ctx, async (trx) => {
    const current = await trx
      .selectFrom("spending_limits")
      .selectAll()
      .where("org_id", "=", caller.orgId)
      .where("id", "=", limitId)
      .forUpdate()
      .executeTakeFirst();
    if (!current) throw notFound("Spending limit", limitId);
    // A patch that changes nothing (an empty one, or the values the limit has) leaves the limit as
    // it is: no event, and updatedAt keeps the time of the last real change.
    if (!changesLimit(current as Row, input)) return toLimit(current as Row);
    const row = await trx
      .updateTable("spending_limits")
      .set({
        ...(input.amountUsd !== undefined ? { amount_micro_usd: toMicro(input.amountUsd) } : {}),
        ...(input.period ? { period: input.period } : {}),
        ...(input.alertThresholds ? { alert_thresholds: sortedThresholds(input.alertThresholds) } : {}),
        updated_at: sql`now()`,
      })
      .where("org_id", "=", caller.orgId)
      .where("id", "=", limitId)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound("Spending limit", limitId);
    await recordLimitEvent(ctx, trx, caller, "spending_limit.updated", row as Row, { fields: Object.keys(input) });
    if (row.period !== current.period) await moveHoldsToPeriod(trx, current, row, new Date());
    const { start } = periodOf(row.period, new Date());
    const amount = Number(row.amount_micro_usd);
    const counter = await trx
      .selectFrom("spend_counters")
      .select("spent_micro_usd")
      .where("limit_id", "=", row.id)
      .where("period_start", "=", start)
      .forUpdate()
      .executeTakeFirst();
    if (counter) {
      const spent = Number(counter.spent_micro_usd);
      const crossed = thresholdsOf(row).filter((t) => spent * 100 >= t * amount);
      await trx
        .updateTable("spend_counters")
        .set({ alerted_threshold: crossed[crossed.length - 1] ?? 0, reached: spent >= amount })
        .where("limit_id", "=", row.id)
        .where("period_start", "=", start)
        .execute();
    }
    return toLimit(row as Row);
  });
}

export async function deleteSpendingLimit(
  ctx: SpendingLimitsContext,
  caller: Caller,
  { limitId }: { limitId: string },
): Promise<void> {
  await withDomainEvents(ctx, async (trx) => {
    const row = await trx
      .deleteFrom("spending_limits")
      .where("org_id", "=", caller.orgId)
      .where("id", "=", limitId)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound("Spending limit", limitId);
    await recordLimitEvent(ctx, trx, caller, "spending_limit.deleted", row as Row);
  });
}

export async function spendingLimitStatus(db: Kysely<AuditDb>, orgId: string, now = new Date()) {
  const limits = await db.selectFrom("spending_limits").selectAll().where("org_id", "=", orgId).orderBy("id").execute();
  const items = [];
  for (const l of limits) {
    const { start, end } = periodOf(l.period, now);
    const counter = await db
      .selectFrom("spend_counters")
      .select(["spent_micro_usd", "reserved_micro_usd"])
      .where("limit_id", "=", l.id)
      .where("period_start", "=", start)
      .executeTakeFirst();
    // No reservation or usage touched this limit yet in this period: what was recorded, as a
    // counter created now would start from.
    const spent = counter ? Number(counter.spent_micro_usd) : await recordedSpend(db, l, { start, end });
    const amount = Number(l.amount_micro_usd);
    const warnAt = thresholdsOf(l)[0];
    const state =
      spent >= amount ? "exceeded" : warnAt !== undefined && spent * 100 >= warnAt * amount ? "warning" : "ok";
    items.push({
      limitId: l.id,
      projectId: l.project_id,
      period: l.period,
      periodStart: start.toISOString(),
      periodEnd: end.toISOString(),
      limitUsd: amount / 1e6,
      spentUsd: spent / 1e6,
      reservedUsd: Number(counter?.reserved_micro_usd ?? 0) / 1e6,
      remainingUsd: Math.max(0, amount - spent) / 1e6,
      state: state as "ok" | "warning" | "exceeded",
    });
  }
  return { items };
}
