import type { AuditRecorded } from "@agentplane/contracts";
import { type Database, migrateToLatest, openDatabase } from "@agentplane/db";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_SCHEMA } from "../src/app.ts";
import { migrations } from "../src/db/migrations/index.ts";
import type { AuditDb } from "../src/db/schema.ts";
import { listAuditTrail, storeAuditRecords } from "../src/services/audit-records.ts";

const event = (id: string, orgId: string, time: string): AuditRecorded => ({
  id,
  orgId,
  time,
  principal: { type: "user", id: "usr_1" },
  action: "thing.changed",
  source: "domain",
  targets: {},
  outcome: "success",
});

const pg = await requirePostgres();

// Each batch is stored by one statement that reads and advances its organizations' clocks.
describe.skipIf(!pg.available)(`audit record timestamps${pg.reason}`, () => {
  let database: Database;
  let drop: () => Promise<void>;
  const db = () => database.forSchema<AuditDb>(AUDIT_SCHEMA);
  const trail = async (orgId: string) =>
    (await listAuditTrail(db(), orgId, { limit: 1000 })).items.map((r) => [r.id, r.time]).reverse();

  beforeAll(async () => {
    const created = await createTestDatabase("audit_clock");
    drop = created.drop;
    database = await openDatabase(created.url, { max: 6 });
    await migrateToLatest(database, AUDIT_SCHEMA, migrations);
  });
  afterAll(async () => {
    await database?.close();
    await drop?.();
  });

  it("moves a record that would tie with or fall behind the one before to one microsecond after it", async () => {
    const stored = await storeAuditRecords(db(), [
      event("e3", "org_a", "2026-01-01T00:00:00.000010Z"),
      event("e1", "org_a", "2026-01-01T00:00:00.000000Z"),
      event("e2", "org_a", "2026-01-01T00:00:00.000000Z"),
      event("e4", "org_a", "2026-01-01T00:00:00.000050Z"),
      event("x1", "org_b", "2026-01-01T00:00:00.000000Z"),
    ]);
    expect(stored).toBe(5);
    // Behind the clock now: after the newest record of its organization.
    expect(await storeAuditRecords(db(), [event("e5", "org_a", "2025-12-31T00:00:00.000000Z")])).toBe(1);
    // Redelivered: skipped.
    expect(await storeAuditRecords(db(), [event("e1", "org_a", "2026-01-01T00:00:00.000000Z")])).toBe(0);
    expect(await trail("org_a")).toEqual([
      ["e1", "2026-01-01T00:00:00.000000Z"],
      ["e2", "2026-01-01T00:00:00.000001Z"],
      ["e3", "2026-01-01T00:00:00.000010Z"],
      ["e4", "2026-01-01T00:00:00.000050Z"],
      ["e5", "2026-01-01T00:00:00.000051Z"],
    ]);
    expect(await trail("org_b")).toEqual([["x1", "2026-01-01T00:00:00.000000Z"]]);
  });

  it("numbers records the same way whatever ISO 8601 form their times take", async () => {
    expect(
      await storeAuditRecords(db(), [
        event("p3", "org_p", "2026-01-01 00:00:00.000010+00"),
        event("p1", "org_p", "2026-01-01T00:00:00.000000Z"),
        event("p2", "org_p", "2026-01-01 00:00:00+00"),
        event("q1", "org_q", "2026-01-01T01:00:00.000000+01:00"),
      ]),
    ).toBe(4);
    expect(await storeAuditRecords(db(), [event("p4", "org_p", "2025-12-31T00:00:00.000000Z")])).toBe(1);
    expect(await trail("org_p")).toEqual([
      ["p1", "2026-01-01T00:00:00.000000Z"],
      ["p2", "2026-01-01T00:00:00.000001Z"],
      ["p3", "2026-01-01T00:00:00.000010Z"],
      ["p4", "2026-01-01T00:00:00.000011Z"],
    ]);
    expect(await trail("org_q")).toEqual([["q1", "2026-01-01T00:00:00.000000Z"]]);
  });

  it("concurrent batches of one organization never share a timestamp", async () => {
    const time = "2026-02-01T00:00:00.000Z";
    const batches = Array.from({ length: 8 }, (_, b) =>
      Array.from({ length: 40 }, (_, i) => event(`c${b}_${i}`, "org_c", time)),
    );
    const stored = await Promise.all(batches.map((batch) => storeAuditRecords(db(), batch)));
    expect(stored.reduce((a, b) => a + b, 0)).toBe(320);
    const times = (await trail("org_c")).map(([, t]) => t);
    expect(new Set(times).size).toBe(320);
    expect(times[0]).toBe("2026-02-01T00:00:00.000000Z");
    expect(times[319]).toBe("2026-02-01T00:00:00.000319Z");
  });

  it("stores every field as sent: quotes, backslashes, braces, commas, line breaks and the word NULL", async () => {
    const awkward = 'say "hi", {x} \\ NULL\nnext\tline ✓';
    const sent: AuditRecorded = {
      id: "odd_1",
      orgId: "org_d",
      projectId: "NULL",
      time: "2026-03-01T00:00:00.000Z",
      principal: { type: "user", id: "usr_\\1", displayName: awkward },
      action: "thing.changed",
      source: "request",
      targetType: "path",
      targetId: awkward,
      targets: { path: awkward, empty: "" },
      outcome: "success",
      status: 200,
      requestId: "",
      ip: "::1",
      userAgent: awkward,
      method: "POST",
      path: "/v1/a,b/{c}",
      details: { note: awkward, nested: { list: [1, "\\", null] } },
    };
    expect(await storeAuditRecords(db(), [sent, event("plain_1", "org_d", "2026-03-01T00:00:01.000Z")])).toBe(2);
    const [stored] = (await listAuditTrail(db(), "org_d", { limit: 10 })).items.filter((r) => r.id === "odd_1");
    // An empty request id reads back as absent, like every other empty optional field.
    const { requestId: _empty, ...expected } = sent;
    expect(stored).toMatchObject({ ...expected, time: "2026-03-01T00:00:00.000000Z" });
    expect(stored?.principal).toEqual(sent.principal);
  });
});
