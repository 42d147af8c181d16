import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AUDIT_RECORDED } from "@agentplane/contracts";
import { type Database, migrateToLatest, openDatabase } from "@agentplane/db";
import { createOutbox, MemoryBus, outboxMigrations } from "@agentplane/events";
import { BullMqBus } from "@agentplane/events/bullmq";
import {
  createTestDatabase,
  requirePostgres,
  requireRedis,
  TEST_REDIS_URL,
  testRedisPrefix,
} from "@agentplane/testkit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AUDIT_SCHEMA } from "../src/app.ts";
import type { AuditDb } from "../src/db/schema.ts";
import { auditTrailQuery, listAuditTrail, storeAuditRecords } from "../src/services/audit-records.ts";
import { auditEvent, OwnRedis, startAudit, waitFor } from "./helpers.ts";

const pg = await requirePostgres();
const redis = await requireRedis();

async function countStored(database: Database, orgId?: string): Promise<number> {
  const db = database.forSchema<AuditDb>(AUDIT_SCHEMA);
  let q = db.selectFrom("audit_records").select(sql<number>`count(*)::int`.as("n"));
  if (orgId) q = q.where("org_id", "=", orgId);
  return (await q.executeTakeFirstOrThrow()).n;
}

describe.skipIf(!pg.available || !redis.available)(`audit ingestion${pg.reason}${redis.reason}`, () => {
  let database: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const created = await createTestDatabase("audit");
    drop = created.drop;
    database = await openDatabase(created.url, { max: 8 });
  });
  afterAll(async () => {
    await database?.close();
    await drop?.();
  });

  it("stores a redelivered event once", async () => {
    const bus = new MemoryBus();
    const service = await startAudit(database, bus);
    const events = Array.from({ length: 50 }, () => auditEvent({ orgId: "org_redeliver" }));
    for (const e of events) await bus.publish(AUDIT_RECORDED, e, { id: e.id, time: e.time });
    for (const e of events.slice(0, 20)) await bus.publish(AUDIT_RECORDED, e, { id: e.id, time: e.time });
    await bus.drain();
    await service.drain();
    // A batch that repeats itself and one that overlaps what is stored.
    const db = database.forSchema<AuditDb>(AUDIT_SCHEMA);
    expect(await storeAuditRecords(db, [...events.slice(10, 30), ...events.slice(10, 30)])).toBe(0);
    expect(await countStored(database, "org_redeliver")).toBe(50);
    await service.close();
  });

  it("stores each event once when two consumers on BullMQ take the same events at once", async () => {
    const prefix = testRedisPrefix("audit-two");
    const busA = new BullMqBus({ url: TEST_REDIS_URL, prefix });
    const busB = new BullMqBus({ url: TEST_REDIS_URL, prefix });
    const producer = new BullMqBus({ url: TEST_REDIS_URL, prefix });
    const a = await startAudit(database, busA, { consumer: { concurrency: 200, batchSize: 100 } });
    const b = await startAudit(database, busB, { consumer: { concurrency: 200, batchSize: 100 } });
    const events = Array.from({ length: 2000 }, (_, i) =>
      auditEvent({ orgId: i % 2 ? "org_two_a" : "org_two_b", time: "2026-03-01T10:00:00.000Z" }),
    );
    // In chunks: each publish is bounded (500 ms), and 2000 at once ran past it on a loaded machine.
    for (let i = 0; i < events.length; i += 200) {
      await Promise.all(
        events.slice(i, i + 200).map((e) => producer.publish(AUDIT_RECORDED, e, { id: e.id, time: e.time })),
      );
    }
    // BullMQ ignores a job id it already holds; the duplicates also go straight into both services'
    // storage, as a redelivery racing with the first delivery would.
    const dbView = database.forSchema<AuditDb>(AUDIT_SCHEMA);
    await Promise.all([
      storeAuditRecords(dbView, events.slice(0, 300)),
      storeAuditRecords(dbView, events.slice(0, 300)),
    ]);
    await waitFor(
      async () => (await countStored(database, "org_two_a")) + (await countStored(database, "org_two_b")) >= 2000,
    );
    // Asserts that nothing happens: batches still in flight when the count reached 2000 (duplicates
    // all) commit within this wait, and would show as extra rows if they were stored twice.
    await new Promise((r) => setTimeout(r, 100));
    expect(await countStored(database, "org_two_a")).toBe(1000);
    expect(await countStored(database, "org_two_b")).toBe(1000);
    const distinct = await sql<{
      n: number;
    }>`select count(distinct (org_id, ts))::int as n from audit.audit_records where org_id in ('org_two_a', 'org_two_b')`.execute(
      database.kysely,
    );
    expect(distinct.rows[0]?.n).toBe(2000);
    await Promise.all([a.close(), b.close()]);
    await Promise.all([busA.close(), busB.close(), producer.close()]);
  }, 60_000);

  it("pages through 10,000 records of the same millisecond, every record exactly once", async () => {
    const db = database.forSchema<AuditDb>(AUDIT_SCHEMA);
    await migrateToLatest(database, AUDIT_SCHEMA, (await import("../src/db/migrations/index.ts")).migrations);
    const time = "2026-04-01T12:00:00.123Z";
    const events = Array.from({ length: 10_000 }, () => auditEvent({ orgId: "org_page", time }));
    for (let i = 0; i < events.length; i += 1000) await storeAuditRecords(db, events.slice(i, i + 1000));
    const seen = new Set<string>();
    let cursor: string | undefined;
    let previous = "9999";
    let pages = 0;
    for (;;) {
      const page = await listAuditTrail(db, "org_page", { limit: 500, ...(cursor ? { cursor } : {}) });
      pages++;
      for (const item of page.items) {
        expect(seen.has(item.id)).toBe(false);
        seen.add(item.id);
        expect(item.time < previous).toBe(true);
        previous = item.time;
        expect(item.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      }
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(seen.size).toBe(10_000);
    expect(pages).toBe(20);
    // The oldest record keeps the event time; the others moved forward a microsecond each.
    expect(previous).toBe("2026-04-01T12:00:00.123000Z");
  }, 60_000);

  it("answers the page query from the (org_id, ts desc) index", async () => {
    const db = database.forSchema<AuditDb>(AUDIT_SCHEMA);
    await sql`analyze audit.audit_records`.execute(database.kysely);
    for (const filter of [
      { limit: 50 },
      { limit: 50, cursor: "2026-04-01T12:00:00.128000Z", action: "createProject" },
    ]) {
      const compiled = auditTrailQuery(db, "org_page", filter).compile();
      const explained = await database.kysely.executeQuery({
        ...compiled,
        sql: `explain (format json) ${compiled.sql}`,
      });
      const plan = JSON.stringify(explained.rows);
      expect(plan).toContain("audit_records_org_ts");
      expect(plan).not.toContain('"Seq Scan"');
    }
  });

  it("loses no audit record when Redis stops and starts while requests run (through the producer's outbox)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "audit-redis-"));
    const server = new OwnRedis({ dir });
    await server.start();
    const prefix = testRedisPrefix("audit-outage");
    const consumerBus = new BullMqBus({ url: server.url, prefix });
    const producerBus = new BullMqBus({ url: server.url, prefix });
    const service = await startAudit(database, consumerBus);
    // A producer service of its own with its outbox in its schema, in the same Postgres.
    await migrateToLatest(database, "producer", outboxMigrations("0001"));
    const outbox = createOutbox({
      database,
      schema: "producer",
      bus: producerBus,
      pollIntervalMs: 20,
      maxBackoffMs: 500,
    });
    outbox.start();

    const produced: string[] = [];
    let failures = 0;
    let stop = false;
    const requests = (async () => {
      let i = 0;
      while (!stop) {
        try {
          produced.push(await outbox.publish(AUDIT_RECORDED, auditEvent({ orgId: "org_outage", action: `op${i++}` })));
        } catch {
          failures++;
        }
        // Pacing of the request loop (about 300 records a second), not a wait for a condition.
        await new Promise((r) => setTimeout(r, 3));
      }
    })();
    // Records are produced before, while and after Redis is down: each phase lasts until the
    // producer has published another 30, however fast or slow the machine is.
    const thirtyMore = async () => {
      const from = produced.length;
      await vi.waitFor(() => expect(produced.length).toBeGreaterThanOrEqual(from + 30), { timeout: 30_000 });
    };
    await thirtyMore();
    await server.stop();
    await thirtyMore();
    await server.start();
    await thirtyMore();
    stop = true;
    await requests;

    expect(failures).toBe(0);
    await waitFor(async () => (await countStored(database, "org_outage")) === produced.length, 100_000);
    const rows = await database
      .forSchema<AuditDb>(AUDIT_SCHEMA)
      .selectFrom("audit_records")
      .select("event_id")
      .where("org_id", "=", "org_outage")
      .execute();
    expect(rows.map((r) => r.event_id).sort()).toEqual([...produced].sort());
    await outbox.stop();
    await service.close();
    await Promise.all([consumerBus.close(), producerBus.close()]);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 150_000);
});
