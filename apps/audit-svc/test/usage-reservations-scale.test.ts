import { type Database, migrateToLatest, openDatabase } from "@agentplane/db";
import { Pricing } from "@agentplane/pricing";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { AUDIT_SCHEMA } from "../src/app.ts";
import { migrations } from "../src/db/migrations/index.ts";
import type { AuditDb } from "../src/db/schema.ts";
import { SpendLedger } from "../src/services/spend.ts";
import { storeUsageRecords } from "../src/services/usage.ts";
import { usageEvent } from "./helpers.ts";

const pg = await requirePostgres();

const usage = (reservationId: string) =>
  usageEvent({ orgId: "org_scale", projectId: "prj_scale", inputTokens: 10, outputTokens: 2, reservationId });

/**
 * Rows of `audit.reservations` read so far by scans of every session (sequential and index), once
 * this session's own counts are flushed (`pg_stat_force_next_flush`, Postgres 15).
 */
async function reservationRowsRead(db: Kysely<AuditDb>): Promise<number> {
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ read: string | number }>`select
      pg_stat_get_tuples_returned(${`${AUDIT_SCHEMA}.reservations`}::regclass) as read`.execute(db);
  return Number(rows[0]?.read ?? 0);
}

// Every call's reservation stays in the table (settled, released or expired), so the table only
// grows; storing a batch must read the reservations it names, not the table.
describe.skipIf(!pg.available)(`usage batches against a large reservations table${pg.reason}`, () => {
  let database: Database;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const created = await createTestDatabase("usage_scale");
    drop = created.drop;
    // One connection: every batch runs the statement prepared on it first.
    database = await openDatabase(created.url, { max: 1 });
    await migrateToLatest(database, AUDIT_SCHEMA, migrations);
  });
  afterAll(async () => {
    await database?.close();
    await drop?.();
  });

  it("reads only the batch's own reservations, with a plan made while the table was empty", async () => {
    const db = database.forSchema<AuditDb>(AUDIT_SCHEMA);
    const deps = { pricing: new Pricing(), spend: new SpendLedger(db) };
    // Enough batches on the empty table, on the one connection, for Postgres to settle on a plan.
    // Batches the size of a busy replica's (a batch's size weighs in the plan).
    const batchOf = (size: number, name: string) => Array.from({ length: size }, (_, i) => usage(`${name}_${i}`));
    for (let i = 0; i < 8; i++) await storeUsageRecords(db, deps, batchOf(150, `rsv_never_${i}`));
    await sql`insert into ${sql.table(`${AUDIT_SCHEMA}.reservations`)}
        (id, org_id, project_id, amount_micro_usd, state, settled_micro_usd, expires_at)
      select 'rsv_old_' || g, 'org_scale', 'prj_scale', 100, 'settled', 90, now()
      from generate_series(1, 50000) g`.execute(db);
    // One reservation the batch names and audit has, still active: settled by its record.
    await sql`insert into ${sql.table(`${AUDIT_SCHEMA}.reservations`)}
        (id, org_id, project_id, amount_micro_usd, state, expires_at)
      values ('rsv_open', 'org_scale', 'prj_scale', 500, 'active', now() + interval '1 hour')`.execute(db);
    const before = await reservationRowsRead(db);
    const batch = [usage("rsv_open"), ...batchOf(149, "rsv_unknown")];
    expect(await storeUsageRecords(db, deps, batch)).toBe(150);
    // A plan that hashed the whole table for the batch's look-ups read all 50,001 rows here.
    expect((await reservationRowsRead(db)) - before).toBeLessThan(200);
    const settled = await sql<{ state: string }>`select state from ${sql.table(`${AUDIT_SCHEMA}.reservations`)}
      where id = 'rsv_open'`.execute(db);
    expect(settled.rows[0]?.state).toBe("settled");
  });

  it("reads only the batch's own reservations while the table grows under it, never vacuumed", async () => {
    // A table of its own, new: the plans are made while it is small.
    const created = await createTestDatabase("usage_grow");
    const own = await openDatabase(created.url, { max: 1 });
    onTestFinished(async () => {
      await own.close();
      await created.drop();
    });
    await migrateToLatest(own, AUDIT_SCHEMA, migrations);
    const db = own.forSchema<AuditDb>(AUDIT_SCHEMA);
    const spend = new SpendLedger(db);
    const deps = { pricing: new Pricing(), spend };
    // As the inference proxy sends them: a few calls of each batch were recorded as reservations
    // (their batch left before they ended), the others never were. Nothing analyzes or vacuums the
    // table, as on a server with autovacuum off: settled rows leave dead entries behind.
    const round = async (r: number) => {
      const opened = Array.from({ length: 20 }, (_, i) => ({
        reservationId: `rsv_grow_${r}_${i}`,
        orgId: "org_grow",
        projectId: "prj_grow",
        estimatedMicroUsd: 500,
        call: { principalType: "user", principalId: "usr_1", provider: "anthropic", model: "claude", route: "/v1/llm" },
      }));
      await spend.open({ reservations: opened });
      const batch = Array.from({ length: 150 }, (_, i) => ({
        ...usage(`rsv_grow_${r}_${i}`),
        orgId: "org_grow",
        projectId: "prj_grow",
      }));
      expect(await storeUsageRecords(db, deps, batch)).toBe(150);
    };
    for (let r = 0; r < 150; r++) await round(r);
    const before = await reservationRowsRead(db);
    await round(150);
    // 3,000 reservations by now: a statement that scanned them (or every entry of the index of
    // active ones, dead entries included) read thousands of rows for this batch.
    expect((await reservationRowsRead(db)) - before).toBeLessThan(400);
    const states = await sql<{ state: string; n: number }>`select state, count(*)::int as n
      from ${sql.table(`${AUDIT_SCHEMA}.reservations`)} where id like 'rsv_grow_%' group by state`.execute(db);
    expect(states.rows).toEqual([{ state: "settled", n: 151 * 20 }]);
  });
});
