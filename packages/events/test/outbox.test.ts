import { migrateToLatest } from "@agentplane/db";
import { databaseTargets } from "@agentplane/db/testing";
import { OwnRedis, requireRedis, testRedisPrefix } from "@agentplane/testkit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BullMqBus } from "../src/bullmq-bus.ts";
import { BufferedPublisher, createOutbox, MemoryBus, type OutboxOptions, outboxMigrations } from "../src/index.ts";

function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const tick = async () => {
      if (await check()) return resolve();
      if (Date.now() - start > timeoutMs) return reject(new Error("timed out"));
      setTimeout(tick, 25);
    };
    void tick();
  });
}

const redis = await requireRedis();
const targets = await databaseTargets();

describe.each(targets)("outbox on $name $reason", (target) => {
  let database: Awaited<ReturnType<typeof target.open>>;
  beforeAll(async () => {
    database = await target.open();
    await migrateToLatest(database.database, "producer", {
      "0001_things": {
        async up(db) {
          await db.schema
            .createTable("things")
            .addColumn("id", "text", (c) => c.primaryKey())
            .execute();
        },
      },
      ...outboxMigrations("0002"),
    });
  }, 60_000);
  afterAll(async () => database?.cleanup());

  it.skipIf(!target.available)("publishes an event only when the producer's transaction commits", async () => {
    const bus = new MemoryBus();
    const seen: string[] = [];
    await bus.subscribe("thing.created", async (e) => void seen.push(e.id));
    const outbox = createOutbox({ database: database.database, schema: "producer", bus, pollIntervalMs: 20 });
    const db = database.database.forSchema<{ things: { id: string } }>("producer");
    await db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto("things").values({ id: "a" }).execute();
        await outbox.enqueue(trx as never, "thing.created", { id: "a" }, { id: "evt-a" });
        throw new Error("roll back");
      })
      .catch(() => {});
    await db.transaction().execute(async (trx) => {
      await trx.insertInto("things").values({ id: "b" }).execute();
      await outbox.enqueue(trx as never, "thing.created", { id: "b" }, { id: "evt-b" });
    });
    expect(await outbox.pending()).toBe(1);
    outbox.start();
    await waitFor(() => seen.length === 1);
    await bus.drain();
    expect(seen).toEqual(["evt-b"]);
    await waitFor(async () => (await outbox.pending()) === 0);
    await outbox.stop();
  });

  it.skipIf(!target.available || !redis.available || target.name !== "postgres")(
    "keeps events while Redis is down and delivers every one of them once it is back",
    async () => {
      const server = new OwnRedis();
      await server.start();
      const prefix = testRedisPrefix("outbox");
      const bus = new BullMqBus({ url: server.url, prefix });
      const consumerBus = new BullMqBus({ url: server.url, prefix });
      const seen = new Set<string>();
      await consumerBus.subscribe("thing.changed", async (e) => void seen.add(e.id), { concurrency: 10 });
      const outbox = createOutbox({
        database: database.database,
        schema: "producer",
        bus,
        pollIntervalMs: 20,
        maxBackoffMs: 300,
      });
      outbox.start();
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) ids.push(await outbox.publish("thing.changed", { i }));
      await waitFor(() => seen.size === 30);

      await server.stop();
      // Writes keep succeeding while the bus is down: the request path never sees the outage.
      for (let i = 30; i < 80; i++) ids.push(await outbox.publish("thing.changed", { i }));
      // The relay tries (and fails) at least twice while the bus is down; the rows stay.
      const attempts = async () =>
        (
          await sql<{ n: number }>`select coalesce(max(attempts), 0)::int as n from producer.event_outbox`.execute(
            database.database.kysely,
          )
        ).rows[0]?.n ?? 0;
      await vi.waitFor(async () => expect(await attempts()).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
      expect(await outbox.pending()).toBeGreaterThan(0);

      await server.start();
      await waitFor(() => seen.size === 80, 30_000);
      expect([...seen].sort()).toEqual([...ids].sort());
      await waitFor(async () => (await outbox.pending()) === 0);
      await outbox.stop();
      await Promise.all([bus.close(), consumerBus.close()]);
      await server.stop();
    },
    60_000,
  );

  it.skipIf(!target.available)("claims rows with a lease so a second relay does not publish them twice", async () => {
    const bus = new MemoryBus();
    const seen: string[] = [];
    await bus.subscribe("thing.leased", async (e) => void seen.push(e.id));
    const a = createOutbox({ database: database.database, schema: "producer", bus, batchSize: 7 });
    const b = createOutbox({ database: database.database, schema: "producer", bus, batchSize: 7 });
    for (let i = 0; i < 40; i++) await a.publish("thing.leased", { i });
    await Promise.all([a.flush(), b.flush(), a.flush(), b.flush()]);
    while ((await a.pending()) > 0) await Promise.all([a.flush(), b.flush()]);
    await bus.drain();
    expect(seen.length).toBe(40);
    expect(new Set(seen).size).toBe(40);
    const left = await sql<{ n: number }>`select count(*)::int as n from producer.event_outbox`.execute(
      database.database.kysely,
    );
    expect(left.rows[0]?.n).toBe(0);
  });
  const rowsOf = async (topic: string) =>
    (
      await sql<{
        id: string;
        attempts: number;
      }>`select id, attempts from producer.event_outbox where topic = ${topic}`.execute(database.database.kysely)
    ).rows;

  it.skipIf(!target.available)(
    "publishes events written outside a transaction right after their insert, without a relay claim",
    async () => {
      const bus = new MemoryBus();
      const seen: string[] = [];
      await bus.subscribe("thing.direct", async (e) => void seen.push(e.id));
      // The relay's own rounds are an hour apart: only the direct path can deliver within the test.
      const outbox = createOutbox({ database: database.database, schema: "producer", bus, pollIntervalMs: 3_600_000 });
      await startIdle(outbox);
      const ids = await outbox.publishMany(
        Array.from({ length: 5 }, (_, i) => ({ topic: "thing.direct", data: { i } })),
      );
      ids.push(await outbox.publish("thing.direct", { i: 5 }));
      await waitFor(() => seen.length === 6);
      await bus.drain();
      expect(seen).toEqual(ids);
      // Never claimed by a relay round (their rows go with the next round, or before a count).
      const rows = await rowsOf("thing.direct");
      expect(rows.map((r) => r.attempts)).toEqual(rows.map(() => 0));
      expect(await outbox.pending()).toBe(0);
      expect(await rowsOf("thing.direct")).toEqual([]);
      await outbox.stop();
    },
  );

  it.skipIf(!target.available)(
    "leaves events whose publish failed to the relay, which delivers each once",
    async () => {
      const bus = new MemoryBus();
      const seen: string[] = [];
      await bus.subscribe("thing.flaky", async (e) => void seen.push(e.id));
      let refusals = 1;
      const flaky: typeof bus = Object.create(bus);
      flaky.publish = async (topic, data, options) => {
        if (refusals-- > 0) throw new Error("bus unavailable");
        return bus.publish(topic, data, options);
      };
      const outbox = createOutbox({ database: database.database, schema: "producer", bus: flaky, pollIntervalMs: 20 });
      outbox.start();
      const ids = await outbox.publishMany(
        Array.from({ length: 4 }, (_, i) => ({ topic: "thing.flaky", data: { i } })),
      );
      await waitFor(() => seen.length === 4);
      await bus.drain();
      expect([...seen].sort()).toEqual([...ids].sort());
      await waitFor(async () => (await outbox.pending()) === 0);
      await outbox.stop();
      expect(seen.length).toBe(4);
    },
  );

  const quiet = (bus: MemoryBus, extra: Partial<OutboxOptions> = {}) =>
    // The relay's own rounds are an hour apart: what the table holds is what the hand-off left.
    createOutbox({ database: database.database, schema: "producer", bus, pollIntervalMs: 3_600_000, ...extra });

  /**
   * Starts a relay and waits until its first round is over. `start` schedules that round on a
   * timer; a round still running when the test writes would take the new rows and, asked again
   * meanwhile, delete them as published before the test reads the table. The 5 ms timer fires
   * after the start's (timers fire in order of expiry), and the flush then joins or follows its round.
   */
  const startIdle = async (outbox: ReturnType<typeof createOutbox>) => {
    outbox.start();
    await new Promise((r) => setTimeout(r, 5));
    await outbox.flush();
  };

  it.skipIf(!target.available)(
    "hands events to a consumer in this process and writes no row for the ones it handled",
    async () => {
      const bus = new MemoryBus();
      const stored: string[] = [];
      const texts: string[] = [];
      await bus.subscribe("thing.handed", async (e) => {
        await new Promise((r) => setTimeout(r, 20));
        stored.push(e.id);
        texts.push((e.data as { text: string }).text);
      });
      const outbox = quiet(bus);
      await startIdle(outbox);
      const ids = await outbox.publishMany(
        Array.from({ length: 6 }, (_, i) => ({ topic: "thing.handed", data: { i, text: `nul\u0000 ${i}` } })),
        { handOff: true },
      );
      // Resolved only once the consumer had every one of them.
      expect([...stored].sort()).toEqual([...ids].sort());
      // Made storable on the way, as the table would have made it.
      expect(texts.every((t) => t.startsWith("nul\uFFFD "))).toBe(true);
      expect(await rowsOf("thing.handed")).toEqual([]);
      await outbox.stop();
    },
  );

  it.skipIf(!target.available)(
    "writes the events a consumer failed on, and the relay delivers them again",
    async () => {
      const bus = new MemoryBus();
      const stored = new Set<string>();
      const refused = new Set<string>();
      // The relay takes the refused rows at once; their second delivery waits until the table was read.
      let release = () => {};
      const tableRead = new Promise<void>((resolve) => {
        release = resolve;
      });
      await bus.subscribe("thing.refused", async (e) => {
        if ((e.data as { i: number }).i % 2 === 1) {
          if (!refused.has(e.id)) {
            refused.add(e.id);
            throw new Error("storage refused");
          }
          await tableRead;
        }
        stored.add(e.id);
      });
      const outbox = quiet(bus);
      await startIdle(outbox);
      const ids = await outbox.publishMany(
        Array.from({ length: 4 }, (_, i) => ({ topic: "thing.refused", data: { i } })),
        { handOff: true },
      );
      // The two refused are in the table, available to the relay at once.
      expect((await rowsOf("thing.refused")).map((r) => r.id).sort()).toEqual([ids[1], ids[3]].sort());
      expect(stored.size).toBe(2);
      release();
      while ((await outbox.pending()) > 0) await outbox.flush();
      await bus.drain();
      expect([...stored].sort()).toEqual([...ids].sort());
      await outbox.stop();
    },
  );

  it.skipIf(!target.available)(
    "writes every event when no consumer is subscribed, or when the consumer does not answer in time",
    async () => {
      const bus = new MemoryBus();
      const outbox = quiet(bus, { handOffTimeoutMs: 100 });
      await startIdle(outbox);
      const unheard = await outbox.publishMany([{ topic: "thing.unheard", data: {} }], { handOff: true });
      expect((await rowsOf("thing.unheard")).map((r) => r.id)).toEqual(unheard);

      const seen: string[] = [];
      let stuck = true;
      await bus.subscribe("thing.slow", async (e) => {
        while (stuck) await new Promise((r) => setTimeout(r, 20));
        seen.push(e.id);
      });
      const started = performance.now();
      const slow = await outbox.publishMany([{ topic: "thing.slow", data: {} }], { handOff: true });
      expect(performance.now() - started).toBeLessThan(2_000);
      expect((await rowsOf("thing.slow")).map((r) => r.id)).toEqual(slow);
      stuck = false;
      // Handled late, and again from the table: at least once, deduplicated by its id downstream.
      while ((await outbox.pending()) > 0) await outbox.flush();
      await bus.drain();
      expect(new Set(seen)).toEqual(new Set(slow));
      await outbox.stop();
    },
  );

  it.skipIf(!target.available)("writes rows as before on a bus that cannot say when an event was handled", async () => {
    const bus = new MemoryBus();
    const seen: string[] = [];
    await bus.subscribe("thing.remote", async (e) => void seen.push(e.id));
    const remote: MemoryBus = Object.create(bus);
    (remote as { deliver?: unknown }).deliver = undefined;
    const outbox = quiet(remote);
    await startIdle(outbox);
    const ids = await outbox.publishMany([{ topic: "thing.remote", data: {} }], { handOff: true });
    // Written leased and published from memory (the path of every bus without `deliver`).
    expect((await rowsOf("thing.remote")).map((r) => r.id)).toEqual(ids);
    await waitFor(() => seen.length === 1);
    await outbox.stop();
  });

  it.skipIf(!target.available)(
    "publishes the events of a process that died before publishing them once their lease ran out",
    async () => {
      const bus = new MemoryBus();
      const seen: string[] = [];
      await bus.subscribe("thing.orphaned", async (e) => void seen.push(e.id));
      // A producer whose publish never completes stands for one that died right after its insert.
      const stuck: typeof bus = Object.create(bus);
      stuck.publish = () => new Promise(() => {});
      const dead = createOutbox({
        database: database.database,
        schema: "producer",
        bus: stuck,
        pollIntervalMs: 3_600_000,
        leaseMs: 300,
      });
      dead.start();
      await dead.flush();
      const ids = await dead.publishMany([1, 2, 3].map((i) => ({ topic: "thing.orphaned", data: { i } })));
      const other = createOutbox({ database: database.database, schema: "producer", bus });
      // Leased: another relay leaves them alone until the lease runs out, then delivers them.
      expect(await other.flush()).toBe(0);
      await new Promise((r) => setTimeout(r, 400));
      expect(await other.flush()).toBe(3);
      await bus.drain();
      expect([...seen].sort()).toEqual([...ids].sort());
      expect(await other.pending()).toBe(0);
    },
  );
});

describe.skipIf(!redis.available)(`buffered publisher${redis.reason}`, () => {
  it("buffers in memory while Redis is down and publishes in order when it is back", async () => {
    const server = new OwnRedis();
    await server.start();
    const prefix = testRedisPrefix("buffered");
    const bus = new BullMqBus({ url: server.url, prefix });
    const consumer = new BullMqBus({ url: server.url, prefix });
    const seen: number[] = [];
    await consumer.subscribe<{ i: number }>("t.buffered", async (e) => void seen.push(e.data.i));
    const publisher = new BufferedPublisher(bus, { maxBackoffMs: 200 });
    await server.stop();
    for (let i = 0; i < 20; i++) publisher.publish("t.buffered", { i });
    await waitFor(() => publisher.pending === 20);
    await server.start();
    await waitFor(() => seen.length === 20, 30_000);
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(publisher.pending).toBe(0);
    publisher.close();
    await Promise.all([bus.close(), consumer.close()]);
    await server.stop();
  }, 60_000);

  it("drops the oldest events once the buffer is full and counts them", async () => {
    const bus = new BullMqBus({ url: "redis://127.0.0.1:1", prefix: testRedisPrefix("full") });
    const publisher = new BufferedPublisher(bus, { maxBuffer: 5, maxBackoffMs: 50 });
    for (let i = 0; i < 8; i++) publisher.publish("t.full", { i });
    await waitFor(() => publisher.pending <= 5 && publisher.droppedCount === 3);
    publisher.close();
    await bus.close();
  });
});
