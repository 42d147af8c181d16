import {
  type BucketInterval,
  MAX_TIMESERIES_BUCKETS,
  type UsageGroupBy,
  type UsageRecorded,
} from "@agentplane/contracts";
import { isUniqueViolation, pgColumns, pgUnnest } from "@agentplane/db";
import type { Pricing } from "@agentplane/pricing";
import { CompiledQuery, type Kysely, sql } from "kysely";
import { AUDIT_SCHEMA, type AuditDb, type UsageRecordsTable } from "../db/schema.ts";
import { bucketOf } from "./audit-analytics.ts";
import type { SpendLedger } from "./spend.ts";
import { bucketSeries, bucketText, checkBucketCount, type Window } from "./time.ts";

export interface UsageLogger {
  warn(obj: object, msg?: string): void;
}

const warnedModels = new Set<string>();

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
    // A model absent from the table is charged as the dearest of its family, never at zero, and
    // stored as not priced (usage-costs counts those calls); said once per model and process.
    const charged = e.costMicroUsd === undefined ? deps.pricing.charge(e.model, tokens) : undefined;
    if (charged && !charged.known && !warnedModels.has(e.model)) {
      if (warnedModels.size >= 1000) warnedModels.clear();
      warnedModels.add(e.model);
      deps.logger?.warn(
        { model: e.model, chargedAs: charged.basis },
        "no price for this model; its usage is charged as the dearest model of its family (set PRICE_TABLE_JSON)",
      );
    }
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
      cost_micro_usd: e.costMicroUsd ?? charged?.costMicroUsd ?? 0,
      priced: charged?.known ?? true,
      request_id: e.requestId ?? null,
      reservation_id: e.reservationId ?? null,
      ts: e.time,
    });
  }
  // The common case, in one statement and no transaction: records under no limit whose reservation
  // holds nothing (settled by the same statement) or that audit never had. The rest (and events
  // stored before) take the transaction below, which locks their reservations first.
  const columns = pgColumns(rows, INPUT_COLUMNS);
  const quickly = (text: string) => db.executeQuery<{ event_id: string }>(CompiledQuery.raw(text, columns));
  // Redeliveries are rare: first without looking up every event id (see storeUnlimited), unless a
  // failed statement would abort the caller's transaction.
  const quick = db.isTransaction
    ? await quickly(STORE_UNLIMITED)
    : await quickly(STORE_UNLIMITED_NEW).catch((err: unknown) => {
        if (!isUniqueViolation(err)) throw err;
        return quickly(STORE_UNLIMITED);
      });
  const done = new Set(quick.rows.map((r) => r.event_id));
  if (done.size === rows.length) return done.size;
  const rest = rows.filter((r) => !done.has(r.event_id));
  return done.size + (await storeLocking(db, deps, rest));
}

/** Stores records and feeds them into the counters in one transaction that locks their reservations. */
function storeLocking(db: Kysely<AuditDb>, deps: { spend: SpendLedger }, rows: UsageRecordsTable[]): Promise<number> {
  return db.transaction().execute(async (trx) => {
    // The limits of the batch's organizations are read-locked first, in the order a change of a
    // limit locks them (before reservations and counters): a period change waits until these
    // records are counted, or is seen by them, so no record is counted on a period no longer in force.
    await trx.executeQuery(CompiledQuery.raw(LOCK_LIMITS, [[...new Set(rows.map((r) => r.org_id))]]));
    // One statement: stores the new records, locks their reservations (with whether each holds
    // against limits) and says whether any limit applies to each record's scope.
    const stored = await trx.executeQuery<StoredRow>(CompiledQuery.raw(STORE_USAGE, pgColumns(rows, INPUT_COLUMNS)));
    const fresh = new Map(stored.rows.map((r) => [r.event_id, r]));
    const direct: { orgId: string; projectId: string | null; at: Date; cost: number }[] = [];
    // Reservations that hold nothing (no limit applied when they were made), settled in one update;
    // their cost is counted with the batch's other direct spend, so a counter created now counts it once.
    const unheld: { id: string; cost: number }[] = [];
    for (const row of rows) {
      const r = fresh.get(row.event_id);
      if (!r) continue;
      if (row.reservation_id && r.state === "active" && !r.held) {
        unheld.push({ id: row.reservation_id, cost: row.cost_micro_usd });
      } else if (row.reservation_id && r.state !== null) {
        // Active: settles it. Expired (settled at its estimate): the real cost replaces the estimate.
        // Released: the call did happen after all, so its cost is added.
        if (r.state !== "settled") await deps.spend.finish(trx, row.reservation_id, "settled", row.cost_micro_usd);
        // Settled through the API already: counted once there.
        continue;
      }
      // No reservation (or one audit never had: the producer recorded the call by its usage alone).
      if (r.limited) {
        direct.push({ orgId: row.org_id, projectId: row.project_id, at: new Date(row.ts), cost: row.cost_micro_usd });
      }
    }
    if (unheld.length > 0) await trx.executeQuery(CompiledQuery.raw(SETTLE_UNHELD, [JSON.stringify(unheld)]));
    if (direct.length > 0) await deps.spend.addSpend(trx, direct);
    return fresh.size;
  });
}

interface StoredRow {
  event_id: string;
  /** The state of the record's reservation (locked), null when it has none or audit never had it. */
  state: string | null;
  held: boolean | null;
  /** Whether some limit applies to the record's organization (and project). */
  limited: boolean;
}

/** The batch's columns, one array each (`pgColumns`): text unless typed here. */
const INPUT_COLUMNS = [
  "event_id",
  "org_id",
  "project_id",
  "principal_type",
  "principal_id",
  "provider",
  "model",
  "route",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "cost_micro_usd",
  "priced",
  "request_id",
  "reservation_id",
  "ts",
] as const satisfies readonly (keyof UsageRecordsTable)[];
const INPUT_TYPES: Partial<Record<(typeof INPUT_COLUMNS)[number], string>> = {
  input_tokens: "bigint",
  output_tokens: "bigint",
  cache_read_tokens: "bigint",
  cache_write_tokens: "bigint",
  cost_micro_usd: "bigint",
  priced: "boolean",
};
// Fixed statement texts with the batch in one array parameter per column: prepared once per
// connection whatever the batch size, and nothing to build per call.
const USAGE_INPUT = pgUnnest(INPUT_COLUMNS, INPUT_TYPES);

/** The new records' insert, its rows read from the batch's columns by the `from` that follows it. */
const INSERT_USAGE = `insert into ${AUDIT_SCHEMA}.usage_records (${INPUT_COLUMNS.join(", ")})
    select ${INPUT_COLUMNS.map((c) => (c === "ts" ? "cast(ts as timestamptz)" : c)).join(", ")}`;

/**
 * A record's reservation, looked up by key one record at a time: a lateral subquery with a limit
 * runs once per row and is never turned into a join over the table, so the plan is a primary-key
 * probe per record whatever the table's statistics say. Before, the batch's reservations were
 * found in one join or `= any(...)`, which the planner answered by scanning the table whenever its
 * statistics (or a plan cached while the table was new) said the table was small: without
 * autovacuum's ANALYZE, every batch read every reservation of the last 7 days, more as they grew.
 */
const RESERVATION_OF = (r: string, columns: string, lock = "") =>
  `left join lateral (select ${columns} from ${AUDIT_SCHEMA}.reservations res
      where res.id = ${r}.reservation_id limit 1 ${lock}) res on true`;

/** Whether some limit applies to a record's organization (and project): asked of the batch's limits. */
const LIMITED = (r: string) => `exists (select 1 from limits l
        where l.org_id = ${r}.org_id and (l.project_id is null or l.project_id = ${r}.project_id))`;
/** The limits of the batch's organizations (almost always none), read once for the whole batch. */
const BATCH_LIMITS = `limits as materialized (
    select l.org_id, l.project_id from ${AUDIT_SCHEMA}.spending_limits l
    where l.org_id = any(cast($${INPUT_COLUMNS.indexOf("org_id") + 1} as text[]))
  )`;

// Settling a reservation and storing its record depend on each other inside the statement: a
// reservation that stopped being active meanwhile (an expiry) is not settled, so its record is not
// stored here either but left to the locking transaction. The update reaches each reservation by
// the row version the lookup found (`ctid`); one changed since is re-read and checked again by
// Postgres, as for any update that meets a concurrent one.
/**
 * `checkStored`: also skip events stored before (redeliveries). Without it the statement has no
 * per-row look-up of the event id, and a redelivered event in the batch fails it as a whole (a
 * unique violation, nothing done) so that the batch is stored again with it.
 */
const storeUnlimited = (checkStored: boolean) => `with ${BATCH_LIMITS},
  input as materialized (
    select r.*, ${LIMITED("r")} as limited, res.state, res.ctid as version
    from ${USAGE_INPUT}
    ${RESERVATION_OF("r", "res.state, res.ctid")}
  ),
  settled as (
    update ${AUDIT_SCHEMA}.reservations as res set state = 'settled', settled_micro_usd = i.cost_micro_usd
    from input i
    where res.ctid = i.version and i.state = 'active' and not i.limited and res.state = 'active'
      and not exists (select 1 from ${AUDIT_SCHEMA}.reservation_holds h where h.reservation_id = res.id)
      ${checkStored ? `and not exists (select 1 from ${AUDIT_SCHEMA}.usage_records u where u.event_id = i.event_id)` : ""}
    returning res.id
  )
  ${INSERT_USAGE}
  from input i
  where not i.limited and (i.state is null or i.reservation_id in (select id from settled))
  ${checkStored ? "on conflict (event_id) do nothing" : ""}
  returning event_id`;
const STORE_UNLIMITED = storeUnlimited(true);
const STORE_UNLIMITED_NEW = storeUnlimited(false);

/** The new records' reservations are locked in id order (concurrent batches never wait on each other in a cycle). */
const STORE_USAGE = `with ${BATCH_LIMITS},
  stored as (
    ${INSERT_USAGE}
    from ${USAGE_INPUT}
    on conflict (event_id) do nothing
    returning event_id, org_id, project_id, reservation_id
  ),
  reserved as (
    select res.id, res.state,
      exists (select 1 from ${AUDIT_SCHEMA}.reservation_holds h where h.reservation_id = res.id) as held
    from (select distinct reservation_id from stored where reservation_id is not null order by reservation_id) r
    ${RESERVATION_OF("r", "res.id, res.state", "for update")}
    where res.id is not null
  )
  select s.event_id, v.state, v.held, ${LIMITED("s")} as limited
  from stored s left join reserved v on v.id = s.reservation_id`;

const LOCK_LIMITS = `select id from ${AUDIT_SCHEMA}.spending_limits
  where org_id = any(cast($1 as text[])) order by id for share`;

const SETTLE_UNHELD = `update ${AUDIT_SCHEMA}.reservations as r set state = 'settled', settled_micro_usd = v.cost
  from jsonb_to_recordset(cast(cast($1 as text) as jsonb)) as v(id text, cost bigint)
  where r.id = v.id`;

const sums = {
  requests: sql<number>`count(*)::int`,
  inputTokens: sql<number>`coalesce(sum(input_tokens), 0)::bigint`,
  outputTokens: sql<number>`coalesce(sum(output_tokens), 0)::bigint`,
  cacheReadTokens: sql<number>`coalesce(sum(cache_read_tokens), 0)::bigint`,
  cacheWriteTokens: sql<number>`coalesce(sum(cache_write_tokens), 0)::bigint`,
  costMicroUsd: sql<number>`coalesce(sum(cost_micro_usd), 0)::bigint`,
  fallbackPricedRequests: sql<number>`count(*) filter (where not priced)::int`,
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
    fallbackPricedRequests: Number(r.fallbackPricedRequests),
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
