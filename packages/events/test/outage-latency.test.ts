import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrateToLatest } from "@agentplane/db";
import { databaseTargets } from "@agentplane/db/testing";
import { OwnRedis, requireRedis, testRedisPrefix } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BullMqBus } from "../src/bullmq-bus.ts";
import { BufferedPublisher, createOutbox, outboxMigrations } from "../src/index.ts";

const redis = await requireRedis();
const targets = (await databaseTargets()).filter((t) => t.name === "postgres");

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

describe.each(targets)("a Redis outage does not sit on request latency ($name) $reason", (target) => {
  let database: Awaited<ReturnType<typeof target.open>>;
  beforeAll(async () => {
    database = await target.open();
    await migrateToLatest(database.database, "outage_producer", outboxMigrations("0001"));
  }, 60_000);
  afterAll(async () => database?.cleanup());

  it.skipIf(!redis.available)(
    `publishes within the bound while Redis is stopped and delivers every event after it returns${redis.reason}`,
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "events-outage-"));
      const server = new OwnRedis({ dir });
      await server.start();
      const prefix = testRedisPrefix("outage");
      const producer = new BullMqBus({ url: server.url, prefix, publishTimeoutMs: 200 });
      const consumer = new BullMqBus({ url: server.url, prefix });
      const seen = new Set<string>();
      await consumer.subscribe("outage.t", async (e) => void seen.add(e.id), { concurrency: 50 });
      const outbox = createOutbox({
        database: database.database,
        schema: "outage_producer",
        bus: producer,
        pollIntervalMs: 50,
        maxBackoffMs: 500,
      });
      outbox.start();
      const buffered = new BufferedPublisher(producer, { maxBackoffMs: 500 });

      const sent: string[] = [];
      const direct: number[] = [];
      const request: number[] = [];
      const once = async (i: number) => {
        // What a request pays: the durable write (outbox) and the gateway's buffered hand-off.
        const started = performance.now();
        sent.push(await outbox.publish("outage.t", { i }));
        sent.push(buffered.publish("outage.t", { i, via: "buffer" }));
        request.push(performance.now() - started);
        // A direct publish fails within the bound instead of hanging.
        const t = performance.now();
        await producer.publish("outage.t", { i, direct: true }).catch(() => {});
        direct.push(performance.now() - t);
      };

      for (let i = 0; i < 20; i++) await once(i);
      await server.stop();
      const outageRequests = request.length;
      for (let i = 20; i < 60; i++) await once(i);
      const duringRequest = request.slice(outageRequests);
      const duringDirect = direct.slice(outageRequests);
      await server.start();
      for (let i = 60; i < 80; i++) await once(i);

      // The bound holds for the direct publish; the request path never waits for Redis at all.
      expect(Math.max(...duringDirect)).toBeLessThan(200 + 300);
      expect(percentile(duringRequest, 50)).toBeLessThan(100);
      expect(percentile(duringRequest, 99)).toBeLessThan(400);

      await vi.waitFor(() => expect(sent.filter((id) => !seen.has(id))).toEqual([]), {
        timeout: 60_000,
        interval: 100,
      });

      buffered.close();
      await outbox.stop();
      await Promise.all([producer.close(), consumer.close()]);
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
    120_000,
  );
});
