import { migrateToLatest } from "@agentplane/db";
import { databaseTargets } from "@agentplane/db/testing";
import { CompiledQuery } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOutbox, MemoryBus, outboxMigrations } from "../src/index.ts";
import { OutboxRelay } from "../src/outbox-relay.ts";
import { outboxStatements } from "../src/outbox-sql.ts";

const SCHEMA = "idle_producer";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

describe.each(await databaseTargets())("an idle outbox relay on $name $reason", (target) => {
  let database: Awaited<ReturnType<typeof target.open>>;
  beforeAll(async () => {
    database = await target.open();
    await migrateToLatest(database.database, SCHEMA, outboxMigrations("0001"));
  }, 60_000);
  afterAll(async () => database?.cleanup());

  /** A relay on the real table whose claim statements are timed as they are sent. */
  const timedRelay = (bus: MemoryBus, pollMs: number, maxIdlePollMs: number) => {
    const statements = outboxStatements(`${SCHEMA}.event_outbox`, 500);
    const claims: number[] = [];
    const relay = new OutboxRelay({
      bus,
      statements,
      run: (text, parameters) => {
        if (text === statements.claim) claims.push(performance.now());
        return database.database.kysely.executeQuery(CompiledQuery.raw(text, parameters));
      },
      pollMs,
      maxIdlePollMs,
      batchSize: 500,
      maxBackoffMs: 1_000,
      leaseMs: 30_000,
    });
    const since = (t: number) => claims.filter((c) => c >= t).length;
    return { relay, claims, since };
  };

  /** Another process's writes: an outbox whose relay is not running here, so nobody is told. */
  const otherProcess = (bus: MemoryBus) => createOutbox({ database: database.database, schema: SCHEMA, bus });

  it.skipIf(!target.available)("polls less and less often while it finds nothing, up to the ceiling", async () => {
    const { relay, claims } = timedRelay(new MemoryBus(), 20, 200);
    relay.start();
    await sleep(1_300);
    await relay.stop();
    // 0, 40, 120, 280, 480, 680, … rather than every 20 ms (some 65 rounds).
    expect(claims.length).toBeLessThanOrEqual(10);
    const between = gaps(claims);
    expect(between[0]).toBeLessThan(150);
    for (const gap of between.slice(-3)) {
      expect(gap).toBeGreaterThanOrEqual(190);
      expect(gap).toBeLessThan(400);
    }
  });

  it.skipIf(!target.available)("polls at the configured interval again after relaySoon()", async () => {
    const { relay, since } = timedRelay(new MemoryBus(), 20, 400);
    relay.start();
    // At the ceiling by now (0, 40, 120, 280, 600, 1000, …).
    await sleep(1_100);
    const asked = performance.now();
    relay.relaySoon();
    await sleep(200);
    await relay.stop();
    // Its own round at once, then 20, 40, 80 ms apart; at the ceiling it would be 2 at most.
    expect(since(asked)).toBeGreaterThanOrEqual(3);
  });

  it.skipIf(!target.available)(
    "delivers a row another process wrote within the ceiling, then polls fast again",
    async () => {
      const bus = new MemoryBus();
      const seen: number[] = [];
      await bus.subscribe("idle.found", async () => void seen.push(performance.now()));
      const { relay, since } = timedRelay(bus, 20, 400);
      relay.start();
      await sleep(1_100);
      const written = performance.now();
      await otherProcess(bus).publish("idle.found", {});
      while (seen.length === 0 && performance.now() - written < 2_000) await sleep(5);
      const found = seen[0] ?? Number.POSITIVE_INFINITY;
      expect(found - written).toBeLessThan(400 + 250);
      await sleep(150);
      await relay.stop();
      // The round that found it resets the interval: 20 then 40 ms later, not 400.
      expect(since(found)).toBeGreaterThanOrEqual(2);
    },
  );

  it.skipIf(!target.available)(
    "takes its idle ceiling from the outbox's settings",
    async () => {
      const bus = new MemoryBus();
      const seen: string[] = [];
      await bus.subscribe("idle.tuned", async (e) => void seen.push(e.id));
      const outbox = createOutbox({
        database: database.database,
        schema: SCHEMA,
        bus,
        pollIntervalMs: 20,
        maxIdlePollMs: 300,
      });
      outbox.start();
      try {
        for (let round = 0; round < 2; round++) {
          // At the ceiling each time; with the default (2 s) there would be no round 1.24 s to 2.52 s.
          await sleep(1_500);
          const written = performance.now();
          const id = await otherProcess(bus).publish("idle.tuned", { round });
          while (!seen.includes(id) && performance.now() - written < 3_000) await sleep(5);
          expect(seen).toContain(id);
          expect(performance.now() - written).toBeLessThan(300 + 250);
        }
      } finally {
        await outbox.stop();
      }
    },
    20_000,
  );
});
