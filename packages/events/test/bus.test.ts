import { requireRedis, TEST_REDIS_URL, testRedisPrefix } from "@agentplane/testkit";
import { describe, expect, it, vi } from "vitest";
import { BullMqBus } from "../src/bullmq-bus.ts";
import { isoNow } from "../src/bus.ts";
import { type Bus, type EventEnvelope, MemoryBus } from "../src/index.ts";

function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (check()) return resolve();
      if (Date.now() - start > timeoutMs) return reject(new Error("timed out"));
      setTimeout(tick, 20);
    };
    tick();
  });
}

const redis = await requireRedis();

const buses: { name: string; skip: boolean; make: () => Bus }[] = [
  { name: "memory", skip: false, make: () => new MemoryBus() },
  {
    name: `bullmq${redis.reason}`,
    skip: !redis.available,
    make: () => new BullMqBus({ url: TEST_REDIS_URL, prefix: testRedisPrefix("bus"), attempts: 5 }),
  },
];

for (const { name, skip, make } of buses) {
  describe.skipIf(skip)(`${name} bus`, () => {
    it("delivers each event to one of the competing consumers, keeping id, topic and payload", async () => {
      const bus = make();
      const seenA: EventEnvelope<{ n: number }>[] = [];
      const seenB: EventEnvelope<{ n: number }>[] = [];
      await bus.subscribe<{ n: number }>("t.compete", async (e) => void seenA.push(e));
      await bus.subscribe<{ n: number }>("t.compete", async (e) => void seenB.push(e));
      for (let n = 0; n < 40; n++) await bus.publish("t.compete", { n }, { id: `e-${n}` });
      await waitFor(() => seenA.length + seenB.length === 40);
      const all = [...seenA, ...seenB].sort((x, y) => x.data.n - y.data.n);
      expect(all.map((e) => e.id)).toEqual(Array.from({ length: 40 }, (_, n) => `e-${n}`));
      expect(all.every((e) => e.topic === "t.compete")).toBe(true);
      await bus.close();
    });

    it("redelivers an event whose handler failed", async () => {
      const bus = make();
      let attempts = 0;
      await bus.subscribe("t.retry", async () => {
        attempts++;
        if (attempts < 3) throw new Error("transient");
      });
      await bus.publish("t.retry", { x: 1 });
      await waitFor(() => attempts >= 3, 15_000);
      expect(attempts).toBe(3);
      await bus.close();
    });

    it("keeps events published before anyone subscribed", async () => {
      const bus = make();
      await bus.publish("t.early", { x: 1 }, { id: "early-1" });
      const seen: string[] = [];
      await bus.subscribe("t.early", async (e) => void seen.push(e.id));
      await waitFor(() => seen.length === 1);
      expect(seen).toEqual(["early-1"]);
      expect(await bus.ready()).toBe(true);
      await bus.close();
    });
  });
}

describe("memory bus", () => {
  it("hands each event of a burst to its handler on its own: one failure is redelivered alone", async () => {
    const bus = new MemoryBus();
    const calls: number[] = [];
    let failed = false;
    await bus.subscribe<{ n: number }>("t.burst", async (e) => {
      calls.push(e.data.n);
      if (e.data.n === 3 && !failed) {
        failed = true;
        throw new Error("transient");
      }
    });
    for (let n = 0; n < 6; n++) await bus.publish("t.burst", { n });
    expect(calls).toEqual([]);
    await bus.drain();
    expect(calls).toEqual([0, 1, 2, 3, 4, 5]);
    await waitFor(() => calls.length === 7);
    expect(calls[6]).toBe(3);
    await bus.close();
  });

  it("drain waits for slow handlers and for the events they publish", async () => {
    const bus = new MemoryBus();
    const done: string[] = [];
    await bus.subscribe("t.first", async () => {
      await new Promise((r) => setTimeout(r, 30));
      await bus.publish("t.second", {});
      done.push("first");
    });
    await bus.subscribe("t.second", async () => {
      await new Promise((r) => setTimeout(r, 30));
      done.push("second");
    });
    await bus.publish("t.first", {});
    await bus.drain();
    expect(done).toEqual(["first", "second"]);
    await bus.close();
  });

  it("deliver settles once the handler is done with the event, not when it is queued", async () => {
    const bus = new MemoryBus();
    const stored: unknown[] = [];
    await bus.subscribe("t.kept", async (e) => {
      await new Promise((r) => setTimeout(r, 30));
      stored.push(e.data);
    });
    const delivered = bus.deliver("t.kept", { n: 1 }, { id: "evt-1" });
    await new Promise((r) => setImmediate(r));
    expect(stored).toEqual([]);
    await delivered;
    expect(stored).toEqual([{ n: 1 }]);
    await bus.close();
  });

  it("deliver rejects when nobody consumes the topic, and keeps nothing for a later consumer", async () => {
    const bus = new MemoryBus();
    await expect(bus.deliver("t.nobody", {})).rejects.toThrow(/no consumer/);
    const seen: unknown[] = [];
    await bus.subscribe("t.nobody", async (e) => void seen.push(e.data));
    await bus.drain();
    expect(seen).toEqual([]);
    await bus.close();
  });

  it("deliver rejects with the handler's error and the bus does not hand the event over again", async () => {
    const bus = new MemoryBus();
    let calls = 0;
    await bus.subscribe("t.fails", async () => {
      calls++;
      throw new Error("storage refused");
    });
    await expect(bus.deliver("t.fails", {})).rejects.toThrow("storage refused");
    // A published event that fails is tried again after 20 ms; a delivered one is the caller's.
    await new Promise((r) => setTimeout(r, 100));
    expect(calls).toBe(1);
    await bus.close();
    await expect(bus.deliver("t.fails", {})).rejects.toThrow(/closed/);
  });
});

describe("bullmq bus without Redis", () => {
  it("fails fast on publish so the producer can keep the event", async () => {
    const bus = new BullMqBus({ url: "redis://127.0.0.1:1", prefix: testRedisPrefix("down") });
    await expect(bus.publish("t.down", { x: 1 })).rejects.toThrow(/not connected/);
    expect(await bus.ready()).toBe(false);
    await bus.close();
  });
});

describe("event time", () => {
  it("is the current millisecond's ISO text, whichever way the clock moves", () => {
    vi.useFakeTimers();
    try {
      for (const at of ["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.001Z", "2025-12-31T23:59:59.999Z"]) {
        vi.setSystemTime(new Date(at));
        expect(isoNow()).toBe(at);
        expect(isoNow()).toBe(new Date().toISOString());
      }
    } finally {
      vi.useRealTimers();
    }
  });
});

const noticeBuses: { name: string; skip: boolean; make: () => [Bus, Bus] }[] = [
  {
    name: "memory",
    skip: false,
    make: () => {
      const bus = new MemoryBus();
      return [bus, bus];
    },
  },
  {
    name: `bullmq${redis.reason}`,
    skip: !redis.available,
    make: () => {
      const prefix = testRedisPrefix("notice");
      return [new BullMqBus({ url: TEST_REDIS_URL, prefix }), new BullMqBus({ url: TEST_REDIS_URL, prefix })];
    },
  },
];

for (const { name, skip, make } of noticeBuses) {
  describe.skipIf(skip)(`${name} bus notices`, () => {
    it("hands each notice to every listener, on every replica, and none after it stopped listening", async () => {
      const [one, two] = make();
      const heard: Record<string, number[]> = { a: [], b: [], c: [] };
      const a = await one.listen<{ n: number }>("t.notice", (e) => void heard.a!.push(e.data.n));
      await two.listen<{ n: number }>("t.notice", (e) => void heard.b!.push(e.data.n));
      // A listener that throws costs the others nothing.
      await two.listen("t.notice", () => {
        throw new Error("listener failed");
      });
      await one.listen<{ n: number }>("t.other", (e) => void heard.c!.push(e.data.n));
      await one.notify("t.notice", { n: 1 });
      await two.notify("t.notice", { n: 2 });
      await waitFor(() => heard.a!.length === 2 && heard.b!.length === 2);
      expect(heard.a!.sort()).toEqual([1, 2]);
      expect(heard.b!.sort()).toEqual([1, 2]);
      await a.close();
      await two.notify("t.notice", { n: 3 });
      await waitFor(() => heard.b!.length === 3);
      expect(heard.a).toEqual([1, 2]);
      expect(heard.c).toEqual([]);
      await Promise.all([...new Set([one, two])].map((bus) => bus.close()));
    });
  });
}
