import { type Database, openDatabase } from "@agentplane/db";
import { createTestDatabase, requirePostgres, type TestDatabase } from "@agentplane/testkit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GroupCommit } from "../src/proxy/group-commit.ts";
import { eventually, type InferencePlatform, manualClock, startInferencePlatform } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream } from "./upstream.ts";

const pg = await requirePostgres();
const messages = [{ role: "user", content: "hi" }];

describe("group commit", () => {
  it("writes the items of a batch in one write and settles a withdrawn item without writing it", async () => {
    const writes: number[][] = [];
    const batches = new GroupCommit<number, string>(
      async (batch) => {
        writes.push(batch);
        return batch.map((n) => `wrote ${n}`);
      },
      { delayMs: 5 },
    );
    const results = [1, 2, 3].map((n) => batches.add(n));
    expect(batches.withdraw(2, "withdrawn")).toBe(true);
    expect(await Promise.all(results)).toEqual(["wrote 1", "withdrawn", "wrote 3"]);
    expect(writes).toEqual([[1, 3]]);
  });

  it("cannot withdraw an item whose batch is being written", async () => {
    let finish: () => void = () => {};
    const batches = new GroupCommit<number, string>(async (batch) => {
      await new Promise<void>((r) => (finish = r));
      return batch.map(() => "written");
    });
    const result = batches.add(7);
    await new Promise((r) => setImmediate(r));
    expect(batches.withdraw(7, "withdrawn")).toBe(false);
    finish();
    expect(await result).toBe("written");
  });
});

describe.skipIf(!pg.available)(`calls recorded in the background, where no limit applies${pg.reason}`, () => {
  let up: FakeUpstream;
  let h: InferencePlatform;
  let own: TestDatabase;
  let database: Database;
  const clock = manualClock();

  beforeAll(async () => {
    up = await startFakeUpstream();
    own = await createTestDatabase("inference_batching");
    database = await openDatabase(own.url);
    h = await startInferencePlatform(
      { cloudBKey: CREDS.cloudBKey, cloudBBaseUrl: `${up.url}/anthropic/v1` },
      // Batches gathered over 1 s: on a loaded machine too, the short calls end before theirs is sent.
      { spend: { clock, batchDelayMs: 1000 } },
      { database },
    );
  });
  afterAll(async () => {
    await h?.close();
    await database?.close();
    await own?.drop();
    await up?.close();
  });

  const post = (body: unknown) =>
    fetch(`${h.url}/v1/llm/cloud-b/family-1/anthropic/v1/messages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${h.projectToken}`,
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify(body),
    });
  const call = async () => {
    const res = await post({ model: "claude-haiku-4-5", max_tokens: 50, messages });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  };
  const reservations = async () =>
    (
      await sql<{
        id: string;
        state: string;
      }>`select id, state from audit.reservations where org_id = ${h.orgId}`.execute(database.kysely)
    ).rows;
  const usage = async () =>
    (
      await sql<{ reservation_id: string; n: number }>`select reservation_id, count(*)::int as n
        from audit.usage_records where org_id = ${h.orgId} group by reservation_id`.execute(database.kysely)
    ).rows;

  it("a call that ended before its batch was sent writes no reservation; its usage event alone counts it, once", async () => {
    // The first call reserves synchronously and learns that no limit applies here.
    await call();
    await h.drainUsage();
    const before = await reservations();
    expect(before).toHaveLength(1);
    for (let i = 0; i < 5; i++) await call();
    await h.drainUsage();
    expect(await reservations()).toEqual(before);
    const counted = await usage();
    expect(counted).toHaveLength(6);
    expect(counted.every((u) => u.n === 1 && u.reservation_id.startsWith("rsv_"))).toBe(true);
  });

  it("a stream still running when its batch is sent has a reservation (a crash leaves it to expire at its estimate)", async () => {
    const before = new Set((await reservations()).map((r) => r.id));
    up.hold = true;
    try {
      const res = await post({ model: "claude-haiku-4-5", max_tokens: 50, stream: true, messages });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      let seen = "";
      while (!seen.includes("content_block_delta")) seen += new TextDecoder().decode((await reader.read()).value);
      await eventually(
        async () => (await reservations()).some((r) => !before.has(r.id) && r.state === "active"),
        "the running stream's reservation",
      );
      up.release();
      while (!(await reader.read()).done);
    } finally {
      up.hold = false;
      up.release();
    }
    await eventually(async () => {
      await h.drainUsage();
      const added = (await reservations()).filter((r) => !before.has(r.id));
      return added.length === 1 && added[0]?.state === "settled";
    }, "the stream's reservation settled by its usage event");
  });

  it("calls ending in the last quarter of the trust are sent, and the answer renews the trust", async () => {
    const count = async () => (await reservations()).length;
    // Into the last quarter of the 1 s trust learned above: this call is recorded.
    clock.advance(800);
    const before = await count();
    await call();
    await eventually(async () => (await count()) === before + 1, "the call recorded to renew the trust");
    // Past the first trust's end: renewed, so the call is forwarded without reserving and not sent.
    clock.advance(400);
    await call();
    await h.drainUsage();
    expect(await count()).toBe(before + 1);
  });

  it("of the calls ending in the last quarter before their batch is sent, one renews the trust", async () => {
    const count = async () => (await reservations()).length;
    // The trust renewed above ends 1 s after its answer: 200 ms of it are left.
    clock.advance(400);
    const before = await count();
    for (let i = 0; i < 4; i++) await call();
    await eventually(async () => (await count()) === before + 1, "one call recorded to renew the trust");
    await h.drainUsage();
    expect(await count()).toBe(before + 1);
    // Renewed: the next call is forwarded without reserving, and not sent.
    clock.advance(300);
    await call();
    await h.drainUsage();
    expect(await count()).toBe(before + 1);
  });
});
