import { type BucketInterval, MAX_TIMESERIES_BUCKETS } from "@agentplane/contracts";
import { type Kysely, sql } from "kysely";
import type { AuditDb } from "../db/schema.ts";
import { bucketSeries, bucketText, checkBucketCount, type Window } from "./time.ts";

const count = sql<number>`count(*)::int`;

export async function auditTrailStats(db: Kysely<AuditDb>, orgId: string, window: Window) {
  const base = db
    .selectFrom("audit_records")
    .where("org_id", "=", orgId)
    .where("ts", ">=", window.from.toISOString())
    .where("ts", "<", window.to.toISOString());
  const [byAction, byOutcome, byActorType] = await Promise.all([
    base
      .select(["action as key", count.as("count")])
      .groupBy("action")
      .orderBy("count", "desc")
      .orderBy("action")
      .execute(),
    base
      .select(["outcome as key", count.as("count")])
      .groupBy("outcome")
      .orderBy("outcome")
      .execute(),
    base
      .select(["principal_type as key", count.as("count")])
      .groupBy("principal_type")
      .orderBy("principal_type")
      .execute(),
  ]);
  return {
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    total: byOutcome.reduce((sum, r) => sum + r.count, 0),
    byAction,
    byOutcome,
    byActorType,
  };
}

/** The bucket (UTC wall-clock timestamp, truncated to the interval) a row's column falls in. */
export function bucketOf(column: string, interval: BucketInterval) {
  return sql<Date>`date_trunc(${sql.lit(interval)}, ${sql.ref(column)} at time zone 'UTC')`;
}

/** Counts per bucket over the window, every bucket present (zero-filled by `generate_series`). */
export async function auditTrailTimeseries(
  db: Kysely<AuditDb>,
  orgId: string,
  window: Window,
  interval: BucketInterval,
) {
  checkBucketCount(window, interval, MAX_TIMESERIES_BUCKETS);
  const buckets = await db
    .with("agg", (qb) =>
      qb
        .selectFrom("audit_records")
        .select([
          bucketOf("ts", interval).as("b"),
          count.as("count"),
          sql<number>`(count(*) filter (where outcome = 'denied'))::int`.as("denied"),
          sql<number>`(count(*) filter (where outcome = 'error'))::int`.as("error"),
        ])
        .where("org_id", "=", orgId)
        .where("ts", ">=", window.from.toISOString())
        .where("ts", "<", window.to.toISOString())
        .groupBy(sql`1`),
    )
    .with("series", (qb) => qb.selectNoFrom(bucketSeries(window, interval).as("b")))
    .selectFrom("series")
    .leftJoin("agg", "agg.b", "series.b")
    .select([
      bucketText("series.b").as("start"),
      sql<number>`coalesce(agg.count, 0)`.as("count"),
      sql<number>`coalesce(agg.denied, 0)`.as("denied"),
      sql<number>`coalesce(agg.error, 0)`.as("error"),
    ])
    .orderBy("series.b")
    .execute();
  return { interval, from: window.from.toISOString(), to: window.to.toISOString(), buckets };
}
