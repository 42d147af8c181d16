import { AuditRecordedSchema, UsageRecordedSchema } from "@agentplane/contracts";
import { describe, expect, it } from "vitest";
import { MicroBatcher } from "../src/ingest/batcher.ts";
import { readAuditEvent, readUsageEvent } from "../src/ingest/validate.ts";
import { auditEvent, usageEvent } from "./helpers.ts";

describe("micro-batcher", () => {
  it("writes the items of one wait together, settles their callers after the write, and splits past the size", async () => {
    const writes: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const batcher = new MicroBatcher<number>(
      async (items) => {
        writes.push([...items]);
        if (writes.length === 1) await gate;
      },
      { maxSize: 3, maxWaitMs: 5 },
    );
    const settled: number[] = [];
    const first = [1, 2].map((n) => batcher.add(n).then(() => void settled.push(n)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(writes).toEqual([[1, 2]]);
    // While the first write runs, seven more arrive: batches of at most three follow.
    const rest = [3, 4, 5, 6, 7, 8, 9].map((n) => batcher.add(n).then(() => void settled.push(n)));
    expect(settled).toEqual([]);
    release();
    await Promise.all([...first, ...rest]);
    expect(writes).toEqual([[1, 2], [3, 4, 5], [6, 7, 8], [9]]);
    expect(settled).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("fails every caller of a failed batch and only those", async () => {
    let calls = 0;
    const batcher = new MicroBatcher<string>(
      async () => {
        calls++;
        if (calls === 1) throw new Error("down");
      },
      { maxSize: 2, maxWaitMs: 1 },
    );
    const outcomes = await Promise.allSettled(["a", "b", "c"].map((s) => batcher.add(s)));
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected", "fulfilled"]);
    await batcher.drain();
  });

  it("drain writes what waits without waiting for the timer", async () => {
    const written: string[] = [];
    const batcher = new MicroBatcher<string>(async (items) => void written.push(...items), { maxWaitMs: 60_000 });
    void batcher.add("x");
    await batcher.drain();
    expect(written).toEqual(["x"]);
  });
});

/** What the consumer stores must be what the schema makes of the event, whichever way it was read. */
function sameAsSchema(
  read: { success: boolean; data?: unknown },
  schema: { safeParse(v: unknown): unknown },
  v: object,
) {
  const parsed = schema.safeParse(v) as { success: boolean; data?: unknown };
  expect(read.success).toBe(parsed.success);
  if (parsed.success) expect(read.data).toEqual(parsed.data);
}

describe("reading events off the bus", () => {
  const { id: _a, ...audit } = auditEvent({ details: { model: "m", n: 1 }, ip: "::1", targets: { projectId: "p" } });
  const { id: _u, ...usage } = usageEvent({ costMicroUsd: 12, requestId: "req_1", reservationId: "res_1" });

  it("reads audit events as the schema does: defaults, unknown fields left out, anything invalid refused", () => {
    const cases: object[] = [
      audit,
      { ...audit, source: undefined, targets: undefined, extra: "dropped" },
      { ...audit, principal: { type: "anonymous", extra: 1 }, orgId: undefined, status: undefined },
      { ...audit, outcome: "maybe" },
      { ...audit, principal: { type: "robot" } },
      { ...audit, status: 201.5 },
      { ...audit, targets: { a: 1 } },
      { ...audit, details: ["not", "a", "record"] },
      { ...audit, action: undefined },
      { ...audit, path: 7 },
    ];
    for (const c of cases) sameAsSchema(readAuditEvent(c, "evt_1"), AuditRecordedSchema, { ...c, id: "evt_1" });
    const read = readAuditEvent({ ...audit, source: undefined, extra: "x" }, "evt_2");
    expect(read.success && read.data).toMatchObject({ id: "evt_2", source: "request" });
    expect(read.success && "extra" in read.data).toBe(false);
    expect(readAuditEvent("nonsense", "evt_3")).toMatchObject({ success: false });
  });

  it("reads usage events as the schema does", () => {
    const cases: object[] = [
      usage,
      { ...usage, cacheReadTokens: undefined, cacheWriteTokens: undefined, costMicroUsd: undefined, other: true },
      { ...usage, inputTokens: -1 },
      { ...usage, outputTokens: 1.5 },
      { ...usage, orgId: undefined },
      { ...usage, costMicroUsd: "12" },
      { ...usage, reservationId: null },
    ];
    for (const c of cases) sameAsSchema(readUsageEvent(c, "use_1"), UsageRecordedSchema, { ...c, id: "use_1" });
    const read = readUsageEvent({ ...usage, cacheReadTokens: undefined }, "use_2");
    expect(read.success && read.data).toMatchObject({ id: "use_2", cacheReadTokens: 0 });
  });
});
