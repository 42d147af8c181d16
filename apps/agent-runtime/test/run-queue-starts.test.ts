import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { openDatabase, type RuntimeDb } from "../src/db/database.ts";
import { WebhookRunQueue } from "../src/webhooks/run-queue.ts";

// Worker starts yield to accepts: a committed run's worker starts once the receiver has a quiet
// moment, or after at most MAX_START_DELAY_MS (500 ms) when accepts never pause. Fake time makes
// "accepts keep arriving every millisecond" exact.

let database: RuntimeDb;
let queue: WebhookRunQueue;
let started: string[];

beforeEach(async () => {
  database = await openDatabase(":memory:");
  started = [];
  vi.useFakeTimers({ toFake: ["setTimeout", "setImmediate", "performance", "Date"] });
  queue = new WebhookRunQueue({
    sqlite: database.sqlite,
    logger: pino({ level: "silent" }),
    executeRun: async (run) => {
      started.push(run.subscription);
    },
    notifyFailure: async () => {},
  });
});

afterEach(async () => {
  vi.useRealTimers();
  await queue.close();
  await database.close();
});

const accept = (subscription: string) =>
  queue.accept({ subscription, event: "push", payload: "{}", prompt: "", deliverTo: "Chat" }, 10);

describe("webhook worker starts", () => {
  it("wait while accepts keep arriving and start in the first quiet turns", async () => {
    const first = accept("first");
    for (let ms = 0; ms < 100; ms++) {
      void accept(`busy-${ms % 20}`);
      await vi.advanceTimersByTimeAsync(1);
    }
    expect(await first).toMatch(/^run_/);
    expect(started).toEqual([]);
    await vi.advanceTimersByTimeAsync(3);
    expect(started[0]).toBe("first");
    // A few per turn until every waiting subscription has its worker.
    await vi.advanceTimersByTimeAsync(20);
    expect(new Set(started).size).toBe(21);
  });

  it("start within the maximum delay when accepts never pause", async () => {
    void accept("first");
    let ms = 0;
    while (!started.includes("first") && ms < 1000) {
      void accept(`busy-${ms % 20}`);
      await vi.advanceTimersByTimeAsync(1);
      ms++;
    }
    expect(started[0]).toBe("first");
    expect(ms).toBeGreaterThanOrEqual(500);
    expect(ms).toBeLessThan(510);
  });
});
