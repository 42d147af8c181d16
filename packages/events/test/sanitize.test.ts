import { migrateToLatest } from "@agentplane/db";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BufferedPublisher, createOutbox, MemoryBus, outboxMigrations, storablePayload } from "../src/index.ts";

describe("payloads are stored whatever text they carry", () => {
  it("replaces NUL and lone surrogates in strings and keys, leaving other text alone", () => {
    const input = { path: "/v1/projects/\u0000", nested: [{ "k\ud800": "a\udc00b" }], ok: "😀 ü", n: 3, none: null };
    expect(storablePayload(input)).toEqual({
      path: "/v1/projects/\uFFFD",
      nested: [{ "k\uFFFD": "a\uFFFDb" }],
      ok: "😀 ü",
      n: 3,
      none: null,
    });
    expect(input.path).toBe("/v1/projects/\u0000");
    expect(input.nested[0]).toEqual({ "k\ud800": "a\udc00b" });
  });

  it("hands back a payload with nothing to replace as it is, and copies only the way to what it replaces", () => {
    const clean = { a: "x", list: [{ b: "y" }], n: 1 };
    expect(storablePayload(clean)).toBe(clean);
    const kept = { ok: "fine" };
    const input = { first: "keep", kept, list: [kept, "a\u0000"], last: 2 };
    const out = storablePayload(input);
    expect(out).toEqual({ first: "keep", kept, list: [kept, "a\uFFFD"], last: 2 });
    expect(Object.keys(out)).toEqual(["first", "kept", "list", "last"]);
    expect(out).not.toBe(input);
    expect(out.kept).toBe(kept);
    expect(input.list[1]).toBe("a\u0000");
  });

  it("replaces a key every time it comes, however often clean keys came before", () => {
    for (let i = 0; i < 3; i++) {
      const clean = { path: "/x", targets: { projectId: "p" } };
      expect(storablePayload(clean)).toBe(clean);
      expect(storablePayload({ path: "/x", "bad\u0000key": 1 })).toEqual({ path: "/x", "bad\uFFFDkey": 1 });
    }
  });

  it("the gateway's buffered publisher sends a storable payload", async () => {
    const bus = new MemoryBus();
    const seen: unknown[] = [];
    await bus.subscribe("t", async (e) => void seen.push(e.data));
    const publisher = new BufferedPublisher(bus);
    publisher.publish("t", { path: "a\u0000" });
    await bus.drain();
    expect(seen).toEqual([{ path: "a\uFFFD" }]);
    publisher.close();
  });
});

const targets = await databaseTargets();
describe.each(targets)("outbox on $name keeps an event with NUL in it $reason", (target) => {
  let database: Awaited<ReturnType<typeof target.open>>;
  beforeAll(async () => {
    database = await target.open();
    await migrateToLatest(database.database, "nul_producer", outboxMigrations("0001"));
  }, 180_000);
  afterAll(async () => database?.cleanup());

  it("writes and relays it with U+FFFD instead of failing the producer's transaction", async () => {
    const bus = new MemoryBus();
    const seen: unknown[] = [];
    await bus.subscribe("t", async (e) => void seen.push(e.data));
    const outbox = createOutbox({ database: database.database, schema: "nul_producer", bus });
    await outbox.publish("t", { name: "x\u0000y", bad: "\udc00" });
    expect(await outbox.flush()).toBe(1);
    await bus.drain();
    expect(seen).toEqual([{ name: "x\uFFFDy", bad: "\uFFFD" }]);
  });

  it("in a batch, replaces only in the payloads that need it and leaves escape-like text alone", async () => {
    const plain = { text: "ok", nested: { list: ["a", 1] } };
    const escapeLike = { text: "a literal \\u0000 and \\ud800 stay" };
    const dirty = { text: "x\u0000", "k\udfff": ["\ud800"] };
    const expected = [plain, escapeLike, { text: "x\uFFFD", "k\uFFFD": ["\uFFFD"] }];
    const bus = new MemoryBus();
    const seen: { id: string; data: unknown }[] = [];
    await bus.subscribe("t.batch", async (e) => void seen.push({ id: e.id, data: e.data }));
    const outbox = createOutbox({
      database: database.database,
      schema: "nul_producer",
      bus,
      pollIntervalMs: 3_600_000,
    });
    outbox.start();
    await outbox.flush();
    const ids = await outbox.publishMany([plain, escapeLike, dirty].map((data) => ({ topic: "t.batch", data })));
    for (let i = 0; i < 500 && seen.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    await bus.drain();
    // Published from memory.
    expect(seen).toEqual(ids.map((id, i) => ({ id, data: expected[i] })));
    expect(dirty.text).toBe("x\u0000");
    await outbox.stop();

    // As stored: what a relay publishes after a producer died before publishing.
    const relayed: unknown[] = [];
    await bus.subscribe("t.stored", async (e) => void relayed.push(e.data));
    const stuck: typeof bus = Object.create(bus);
    stuck.publish = () => new Promise(() => {});
    const dead = createOutbox({
      database: database.database,
      schema: "nul_producer",
      bus: stuck,
      pollIntervalMs: 3_600_000,
      leaseMs: 200,
    });
    dead.start();
    await dead.flush();
    await dead.publishMany([plain, escapeLike, dirty].map((data) => ({ topic: "t.stored", data })));
    const relay = createOutbox({ database: database.database, schema: "nul_producer", bus });
    await new Promise((r) => setTimeout(r, 300));
    expect(await relay.flush()).toBeGreaterThanOrEqual(3);
    await bus.drain();
    expect(relayed).toEqual(expected);
  });
});
