import { type Database, openDatabase } from "@agentplane/db";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clockInputs, epochMicros } from "../src/services/audit-clock.ts";

const TIMES = [
  "2026-01-01T00:00:00Z",
  "2026-01-01T00:00:00.1Z",
  "2026-01-01T00:00:00.000010Z",
  "2026-11-24T08:14:05.959Z",
  "2026-11-24T08:14:05.959+05:30",
  "2026-11-24T08:14:05.959-08:00",
  "1999-12-31T23:59:59.999999999Z",
  // Halfway between two microseconds: Postgres rounds to even.
  "2026-01-01T00:00:00.0000005Z",
  "2026-01-01T00:00:00.0000015Z",
  "2026-01-01T00:00:00.0000025Z",
  "2026-01-01T00:00:00.1234565Z",
  "2026-01-01T00:00:00.123456789+00:00",
  "2024-02-29T12:00:00.5-00:30",
];

it("leaves times that are not plain ISO 8601 to Postgres", () => {
  for (const time of ["2026-01-01 00:00:00Z", "2026-01-01T00:00:00", "yesterday", "2026-01-01T00:00:60Z", ""]) {
    expect(epochMicros(time)).toBeUndefined();
  }
  expect(clockInputs([{ clock: "o", id: "a", time: "2026-01-01 00:00:00+00" }])).toBeUndefined();
});

it("numbers each clock's records by time then id, with the running maximum of time minus number", () => {
  const t = (us: number) => `2026-01-01T00:00:00.${String(us).padStart(6, "0")}Z`;
  const base = Date.parse("2026-01-01T00:00:00Z") * 1000;
  const inputs = clockInputs([
    { clock: "b", id: "x", time: t(5) },
    { clock: "a", id: "e2", time: t(0) },
    { clock: "a", id: "e3", time: t(10) },
    { clock: "a", id: "e1", time: t(0) },
    { clock: "a", id: "e4", time: t(50) },
  ]);
  expect(inputs?.k).toEqual([1, 2, 3, 1, 4]);
  // a: e1 (0-1), e2 (0-2), e3 (10-3), e4 (50-4): running maxima -1, -1, 7, 46.
  expect(inputs?.m.map((m) => Number(m) - base)).toEqual([4, -1, 7, -1, 46]);
});

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`reading event times${pg.reason}`, () => {
  let database: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const created = await createTestDatabase("audit_clock_inputs");
    drop = created.drop;
    database = await openDatabase(created.url);
  });
  afterAll(async () => {
    await database?.close();
    await drop?.();
  });

  it("reads every plain ISO 8601 time to the same microsecond as Postgres", async () => {
    for (const time of TIMES) {
      const { rows } = await sql<{
        us: string;
      }>`select (extract(epoch from cast(cast(${time} as text) as timestamptz)) * 1000000)::bigint::text as us`.execute(
        database.kysely,
      );
      expect([time, epochMicros(time)]).toEqual([time, Number(rows[0]?.us)]);
    }
  });
});
