import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase, type RuntimeDb } from "../src/db/database.ts";
import { WebhookRunQueue } from "../src/webhooks/run-queue.ts";

let database: RuntimeDb;
let queue: WebhookRunQueue;
let seen: string[];

beforeEach(async () => {
  database = await openDatabase(":memory:");
  seen = [];
  queue = new WebhookRunQueue({
    sqlite: database.sqlite,
    logger: pino({ level: "silent" }),
    executeRun: async (run) => {
      seen.push(run.payload);
      if (run.event === "bad") throw new Error("the model call failed");
    },
    notifyFailure: async () => {},
  });
});

afterEach(async () => {
  await queue.close();
  await database.close();
});

const rows = () =>
  database.sqlite
    .prepare("select event, status, length(payload) as size from webhook_run order by seq")
    .all() as Array<{
    event: string;
    status: string;
    size: number;
  }>;

/**
 * A run's payload (up to 1 MiB) is what its run reads; once it has finished nothing reads it, and
 * the rows of runs are kept for the run history. Kept too, every run left its whole body in the
 * database for good: a sender that posts large bodies grew it by a MiB a run.
 */
describe("a finished webhook run", () => {
  it("keeps its record but not its payload, delivered or failed", async () => {
    const payload = JSON.stringify({ padding: "x".repeat(500_000) });
    for (const event of ["good", "bad"]) {
      await queue.accept({ subscription: "ci", event, payload, prompt: "", deliverTo: "Chat" }, 10);
    }
    await queue.idle();
    expect(seen).toEqual([payload, payload]);
    expect(rows()).toEqual([
      { event: "good", status: "delivered", size: 0 },
      { event: "bad", status: "failed", size: 0 },
    ]);
  });
});
