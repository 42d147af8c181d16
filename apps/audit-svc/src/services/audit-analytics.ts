import { type BucketInterval, MAX_TIMESERIES_BUCKETS } from "@agentplane/contracts";
import { type Kysely, sql } from "kysely";
import type { AuditDb } from "../db/schema.ts";
import { bucketStarts, type Window } from "./time.ts";

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

/** Bucket start as `YYYY-MM-DDTHH:00:00.000Z` text, truncated in UTC. */
export function bucketKey(column: string, interval: BucketInterval) {
  return sql<string>`to_char(date_trunc(${sql.lit(interval)}, ${sql.ref(column)} at time zone 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS".000Z"')`;
}

export async function auditTrailTimeseries(
  db: Kysely<AuditDb>,
  orgId: string,
  window: Window,
  interval: BucketInterval,
) {
  const starts = bucketStarts(window, interval, MAX_TIMESERIES_BUCKETS);
  const rows = await db
    .selectFrom("audit_records")
    .select([
      bucketKey("ts", interval).as("bucket"),
      count.as("count"),
      sql<number>`(count(*) filter (where outcome = 'denied'))::int`.as("denied"),
      sql<number>`(count(*) filter (where outcome = 'error'))::int`.as("error"),
    ])
    .where("org_id", "=", orgId)
    .where("ts", ">=", window.from.toISOString())
    .where("ts", "<", window.to.toISOString())
    .groupBy(sql`1`)
    .execute();
  const byStart = new Map(rows.map((r) => [r.bucket, r]));
  return {
    interval,
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    buckets: starts.map((ms) => {
      const start = new Date(ms).toISOString();
      const r = byStart.get(start);
      return { start, count: r?.count ?? 0, denied: r?.denied ?? 0, error: r?.error ?? 0 };
    }),
  };
}
