import { AUDIT_RECORDED } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { BullMqBus } from "@agentplane/events/bullmq";
import {
  createTestDatabase,
  requirePostgres,
  requireRedis,
  TEST_REDIS_URL,
  testRedisPrefix,
} from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_SCHEMA } from "../src/app.ts";
import type { AuditDb } from "../src/db/schema.ts";
import { writeIsolating } from "../src/ingest/isolate.ts";
import { auditEvent, startAudit, waitFor } from "./helpers.ts";

const pg = await requirePostgres();
const redis = await requireRedis();

async function stored(database: Database, orgId: string): Promise<string[]> {
  const rows = await database
    .forSchema<AuditDb>(AUDIT_SCHEMA)
    .selectFrom("audit_records")
    .select("event_id")
    .where("org_id", "=", orgId)
    .execute();
  return rows.map((r) => r.event_id).sort();
}

/**
 * 300 records arrive at once and one of them carries what Postgres refuses (`\u0000` in a JSON
 * string, a lone surrogate in another): the 299 good ones are stored, the bad one is kept in
 * `dead_letters`, logged and counted in `/metrics`, and none is silently dropped.
 */
async function poisonedBatch(database: Database, bus: MemoryBus | BullMqBus, orgId: string) {
  const service = await startAudit(database, bus, { consumer: { concurrency: 300, batchSize: 1000 } });
  const before = await service.deadLetters();
  const events = Array.from({ length: 300 }, (_, i) => auditEvent({ orgId, action: `op${i}` }));
  const poisoned = events[137]!;
  poisoned.path = "/v1/projects/\u0000/rotate-keys";
  poisoned.targets = { projectId: "\u0000" };
  const surrogate = events[42]!;
  surrogate.details = { name: "bad \udc00 name" };
  await Promise.all(events.map((e) => bus.publish(AUDIT_RECORDED, e, { id: e.id, time: e.time })));
  if (bus instanceof MemoryBus) await bus.drain();
  await waitFor(async () => (await service.deadLetters()).stored >= before.stored + 2, 60_000);
  await service.drain();
  const good = events.filter((e) => e !== poisoned && e !== surrogate).map((e) => e.id);
  await waitFor(async () => (await stored(database, orgId)).length >= good.length, 60_000);
  expect(await stored(database, orgId)).toEqual(good.sort());

  const after = await service.deadLetters();
  expect(after.stored - before.stored).toBe(2);
  expect(after.thisProcess).toBe(2);
  const letters = await database
    .forSchema<AuditDb>(AUDIT_SCHEMA)
    .selectFrom("dead_letters")
    .selectAll()
    .where("event_id", "in", [poisoned.id, surrogate.id])
    .orderBy("event_id")
    .execute();
  expect(letters.map((l) => l.event_id).sort()).toEqual([poisoned.id, surrogate.id].sort());
  const kept = letters.find((l) => l.event_id === poisoned.id)!;
  expect(kept.topic).toBe(AUDIT_RECORDED);
  expect(JSON.parse(kept.payload).path).toBe("/v1/projects/\u0000/rotate-keys");
  expect(kept.error).toMatch(/^22/);

  const metrics = await (await service.app.request("/metrics")).text();
  expect(metrics).toContain(`agentplane_audit_dead_letters ${after.stored}`);
  expect(metrics).toContain("agentplane_audit_dead_lettered_total 2");
  await service.close();
}

describe("a record storage rejects costs no other record (PGlite, in-memory bus)", () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
  });
  afterAll(async () => {
    await database?.close();
  });

  it("stores the 299 good records of 300 and dead-letters the poisoned one", async () => {
    await poisonedBatch(database, new MemoryBus(), "org_poison_lite");
  }, 60_000);
});

describe.skipIf(!pg.available || !redis.available)(
  `a record storage rejects costs no other record (Postgres, BullMQ)${pg.reason}${redis.reason}`,
  () => {
    let database: Database;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      const created = await createTestDatabase("audit_dead");
      drop = created.drop;
      database = await openDatabase(created.url, { max: 8 });
    });
    afterAll(async () => {
      await database?.close();
      await drop?.();
    });

    it("stores the 299 good records of 300 and dead-letters the poisoned one", async () => {
      const bus = new BullMqBus({ url: TEST_REDIS_URL, prefix: testRedisPrefix("audit-dead") });
      await poisonedBatch(database, bus, "org_poison_pg");
      await bus.close();
    }, 90_000);

    it("fails the batch, dead-letters nothing, when the database itself is unavailable", async () => {
      const lost = Object.assign(new Error("connection terminated"), { code: "57P01" });
      let letters = 0;
      const write = async () => {
        throw lost;
      };
      await expect(
        writeIsolating([auditEvent(), auditEvent()], write, async () => {
          letters++;
        }),
      ).rejects.toBe(lost);
      expect(letters).toBe(0);
    });
  },
);
