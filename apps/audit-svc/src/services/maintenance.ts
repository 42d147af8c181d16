import type { Database } from "@agentplane/db";
import type { Logger } from "@agentplane/service-kit";
import { type Kysely, sql } from "kysely";
import type { AuditDb } from "../db/schema.ts";
import type { SpendLedger } from "./spend.ts";

/** A stable key for pg_try_advisory_lock shared by every replica: only one of them prunes at a time. */
const RETENTION_LOCK = 0x617564_6974_0001n;
/** Rows deleted per statement, so no single transaction grows large. */
const CHUNK = 5000;

/**
 * Runs `work` on one connection holding the retention lock, or returns -1 when another replica
 * holds it.
 */
function underRetentionLock(database: Database, schema: string, work: (db: Kysely<AuditDb>) => Promise<number>) {
  return database.kysely.connection().execute(async (conn) => {
    const lock = await sql<{
      ok: boolean;
    }>`select pg_try_advisory_lock(${sql.lit(RETENTION_LOCK.toString())}::bigint) as ok`.execute(conn);
    if (!lock.rows[0]?.ok) return -1;
    try {
      return await work(conn.withSchema(schema) as unknown as Kysely<AuditDb>);
    } finally {
      await sql`select pg_advisory_unlock(${sql.lit(RETENTION_LOCK.toString())}::bigint)`.execute(conn);
    }
  });
}

/** Runs a delete of at most CHUNK rows until one deletes fewer; returns the rows deleted in all. */
async function deleteInChunks(chunk: () => Promise<{ numDeletedRows: bigint }>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = Number((await chunk()).numDeletedRows);
    total += n;
    if (n < CHUNK) return total;
  }
}

/**
 * Deletes audit records older than the retention period, a few thousand rows per statement. Runs
 * only where the advisory lock is free (one replica at a time). Returns the number of records
 * deleted, or -1 when another replica holds the lock.
 */
export async function pruneAuditRecords(database: Database, schema: string, retentionDays: number, now = new Date()) {
  const cutoff = new Date(now.getTime() - retentionDays * 24 * 3_600_000).toISOString();
  return underRetentionLock(database, schema, (db) =>
    deleteInChunks(() =>
      db
        .deleteFrom("audit_records")
        .where("event_id", "in", (eb) =>
          eb.selectFrom("audit_records").select("event_id").where("ts", "<", cutoff).limit(CHUNK),
        )
        .executeTakeFirst(),
    ),
  );
}

/**
 * Deletes reservations that ended (settled, released or expired) and were opened more than
 * `retentionMs` ago, with their holds: one is opened for nearly every model call, and a finished
 * one matters only while a late or redelivered usage report of its call may still arrive (a
 * redelivery is recognized by its event id in any case). Active reservations are left to expiry.
 * Returns the number deleted, or -1 when another replica holds the retention lock.
 */
export async function pruneReservations(database: Database, schema: string, retentionMs: number, now = new Date()) {
  const cutoff = new Date(now.getTime() - retentionMs);
  return underRetentionLock(database, schema, (db) =>
    deleteInChunks(() =>
      db
        .deleteFrom("reservations")
        .where("id", "in", (eb) =>
          eb
            .selectFrom("reservations")
            .select("id")
            .where("created_at", "<", cutoff)
            .where("state", "<>", "active")
            .limit(CHUNK),
        )
        .executeTakeFirst(),
    ),
  );
}

/** Interval timer for retention of records and reservations (hourly) and reservation expiry (every run). */
export function startMaintenance(deps: {
  database: Database;
  schema: string;
  spend: SpendLedger;
  logger: Logger;
  retentionDays: number;
  reservationRetentionMs: number;
  intervalMs: number;
}): { stop(): void } {
  let lastPrune = 0;
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const expired = await deps.spend.expire();
      if (expired > 0) deps.logger.info({ expired }, "expired spend reservations settled at their estimate");
      if (Date.now() - lastPrune >= 3_600_000) {
        lastPrune = Date.now();
        const pruned = await pruneAuditRecords(deps.database, deps.schema, deps.retentionDays);
        if (pruned > 0) deps.logger.info({ pruned, retentionDays: deps.retentionDays }, "old audit records pruned");
        const ended = await pruneReservations(deps.database, deps.schema, deps.reservationRetentionMs);
        if (ended > 0) deps.logger.info({ pruned: ended }, "old finished spend reservations pruned");
      }
    } catch (err) {
      deps.logger.error({ err: (err as Error).message }, "audit maintenance failed");
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), deps.intervalMs);
  timer.unref();
  const first = setTimeout(() => void tick(), Math.min(5000, deps.intervalMs));
  first.unref();
  return {
    stop() {
      clearInterval(timer);
      clearTimeout(first);
    },
  };
}
