import {
  type BucketInterval,
  MAX_TIMESERIES_BUCKETS,
  type UsageGroupBy,
  type UsageRecorded,
} from "@agentplane/contracts";
import { type Kysely, sql } from "kysely";
import type { AuditDb, UsageRecordsTable } from "../db/schema.ts";
import { bucketOf } from "./audit-analytics.ts";
import type { Pricing } from "./pricing.ts";
import type { SpendLedger } from "./spend.ts";
import { bucketSeries, bucketText, checkBucketCount, type Window } from "./time.ts";

export interface UsageLogger {
  warn(obj: object, msg?: string): void;
}

/**
 * Stores usage events once each, priced from the price table unless the producer sent a cost,
 * and feeds the new ones into spending-limit counters: usage carrying a reservation settles it,
 * other usage is added to the counters directly. Returns how many records were new.
 */
export async function storeUsageRecords(
  db: Kysely<AuditDb>,
  deps: { pricing: Pricing; spend: SpendLedger; logger?: UsageLogger | undefined },
  events: readonly UsageRecorded[],
): Promise<number> {
  const unique = new Map<string, UsageRecorded>();
  for (const e of events) unique.set(e.id, e);
  if (unique.size === 0) return 0;
  const rows: UsageRecordsTable[] = [];
  for (const e of unique.values()) {
    const tokens = {
      inputTokens: e.inputTokens,
      outputTokens: e.outputTokens,
      cacheReadTokens: e.cacheReadTokens ?? 0,
      cacheWriteTokens: e.cacheWriteTokens ?? 0,
    };
    const priced = e.costMicroUsd ?? deps.pricing.cost(e.model, tokens);
    if (priced === undefined)
      deps.logger?.warn({ model: e.model }, "no price for this model; its usage is recorded at zero cost");
    rows.push({
      event_id: e.id,
      org_id: e.orgId,
      project_id: e.projectId ?? null,
      principal_type: e.principalType,
      principal_id: e.principalId,
      provider: e.provider,
      model: e.model,
      route: e.route,
      input_tokens: tokens.inputTokens,
      output_tokens: tokens.outputTokens,
      cache_read_tokens: tokens.cacheReadTokens,
      cache_write_tokens: tokens.cacheWriteTokens,
      cost_micro_usd: priced ?? 0,
      priced: priced !== undefined,
      request_id: e.requestId ?? null,
      reservation_id: e.reservationId ?? null,
      ts: e.time,
    });
  }
  return db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto("usage_records")
      .values(rows)
      .onConflict((oc) => oc.column("event_id").doNothing())
      .returning("event_id")
      .execute();
    const fresh = new Set(inserted.map((r) => r.event_id));
    const direct: { orgId: string; projectId: string | null; at: Date; cost: number }[] = [];
    // The batch's reservations and which of them hold against limits, in two queries.
    const reservationIds = rows.filter((r) => fresh.has(r.event_id) && r.reservation_id).map((r) => r.reservation_id!);
    const states = new Map<string, string>();
    const holding = new Set<string>();
    if (reservationIds.length > 0) {
      const found = await trx
        .selectFrom("reservations")
        .select(["id", "state"])
        .where("id", "in", reservationIds)
        .orderBy("id")
        .forUpdate()
        .execute();
      for (const r of found) states.set(r.id, r.state);
      const active = found.filter((r) => r.state === "active").map((r) => r.id);
      if (active.length > 0) {
        const holds = await trx
          .selectFrom("reservation_holds")
          .select("reservation_id")
          .distinct()
          .where("reservation_id", "in", active)
          .execute();
        for (const h of holds) holding.add(h.reservation_id);
      }
    }
    for (const row of rows) {
      if (!fresh.has(row.event_id)) continue;
      const state = row.reservation_id ? states.get(row.reservation_id) : undefined;
      if (row.reservation_id && state === "active" && !holding.has(row.reservation_id)) {
        // A reservation that holds nothing (no limit applied when it was made): settled here, its
        // cost counted with the batch's other direct spend, so a counter created now counts it once.
        await trx
          .updateTable("reservations")
          .set({ state: "settled", settled_micro_usd: row.cost_micro_usd })
          .where("id", "=", row.reservation_id)
          .execute();
      } else if (row.reservation_id && state !== undefined) {
        // Active: settles it. Expired (settled at its estimate): the real cost replaces the estimate.
        // Released: the call did happen after all, so its cost is added.
        if (state !== "settled") await deps.spend.finish(trx, row.reservation_id, "settled", row.cost_micro_usd);
        // Settled through the API already: counted once there.
        continue;
      }
      direct.push({ orgId: row.org_id, projectId: row.project_id, at: new Date(row.ts), cost: row.cost_micro_usd });
    }
    if (direct.length > 0) await deps.spend.addSpend(trx, direct);
    return fresh.size;
  });
}

const sums = {
  requests: sql<number>`count(*)::int`,
  inputTokens: sql<number>`coalesce(sum(input_tokens), 0)::bigint`,
  outputTokens: sql<number>`coalesce(sum(output_tokens), 0)::bigint`,
  cacheReadTokens: sql<number>`coalesce(sum(cache_read_tokens), 0)::bigint`,
  cacheWriteTokens: sql<number>`coalesce(sum(cache_write_tokens), 0)::bigint`,
  costMicroUsd: sql<number>`coalesce(sum(cost_micro_usd), 0)::bigint`,
};

function totals(r: Record<keyof typeof sums, number | string>) {
  const costMicroUsd = Number(r.costMicroUsd);
  return {
    requests: Number(r.requests),
    inputTokens: Number(r.inputTokens),
    outputTokens: Number(r.outputTokens),
    cacheReadTokens: Number(r.cacheReadTokens),
    cacheWriteTokens: Number(r.cacheWriteTokens),
    costMicroUsd,
    costUsd: costMicroUsd / 1e6,
  };
}

function groupExpression(groupBy: UsageGroupBy) {
  switch (groupBy) {
    case "project":
      return sql<string | null>`project_id`;
    case "model":
      return sql<string | null>`model`;
    case "provider":
      return sql<string | null>`provider`;
    case "day":
      return sql<string | null>`to_char(date_trunc('day', ts at time zone 'UTC'), 'YYYY-MM-DD')`;
  }
}

export async function usageCosts(db: Kysely<AuditDb>, orgId: string, window: Window, groupBy: UsageGroupBy) {
  const base = db
    .selectFrom("usage_records")
    .where("org_id", "=", orgId)
    .where("ts", ">=", window.from.toISOString())
    .where("ts", "<", window.to.toISOString());
  const key = groupExpression(groupBy);
  const [groups, total] = await Promise.all([
    base
      .select(() => [key.as("key"), ...Object.entries(sums).map(([name, expr]) => expr.as(name))])
      .groupBy(sql`1`)
      .orderBy(sql`1`)
      .execute(),
    base.select(() => Object.entries(sums).map(([name, expr]) => expr.as(name))).executeTakeFirstOrThrow(),
  ]);
  return {
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    groupBy,
    total: totals(total as never),
    groups: groups.map((g) => ({ key: (g as { key: string | null }).key, ...totals(g as never) })),
  };
}

export async function usageCostTimeseries(
  db: Kysely<AuditDb>,
  orgId: string,
  window: Window,
  interval: BucketInterval,
  projectId?: string,
) {
  checkBucketCount(window, interval, MAX_TIMESERIES_BUCKETS);
  const rows = await db
    .with("agg", (qb) => {
      let q = qb
        .selectFrom("usage_records")
        .select([bucketOf("ts", interval).as("b"), sums.requests.as("requests"), sums.costMicroUsd.as("cost")])
        .where("org_id", "=", orgId)
        .where("ts", ">=", window.from.toISOString())
        .where("ts", "<", window.to.toISOString());
      if (projectId) q = q.where("project_id", "=", projectId);
      return q.groupBy(sql`1`);
    })
    .with("series", (qb) => qb.selectNoFrom(bucketSeries(window, interval).as("b")))
    .selectFrom("series")
    .leftJoin("agg", "agg.b", "series.b")
    .select([bucketText("series.b").as("start"), "agg.requests", "agg.cost"])
    .orderBy("series.b")
    .execute();
  return {
    interval,
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    buckets: rows.map((r) => {
      const costMicroUsd = Number(r.cost ?? 0);
      return { start: r.start, requests: Number(r.requests ?? 0), costMicroUsd, costUsd: costMicroUsd / 1e6 };
    }),
  };
}
