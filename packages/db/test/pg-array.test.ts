import { CompiledQuery } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, pgArray, pgColumns, pgUnnest } from "../src/index.ts";
import { databaseTargets } from "../src/testing.ts";

const AWKWARD = [
  "plain",
  "",
  "NULL",
  "null",
  'a "quoted" word',
  "back\\slash\\",
  '\\"',
  "{braces}, commas, and spaces ",
  " leading space",
  "line\nbreak\ttab\rreturn",
  "ünïcödé ✓ 漢字 😀",
  "'single'",
];

it("quotes every text element and escapes only quotes and backslashes", () => {
  expect(pgArray(["a", null, undefined, 3, true, 'say "hi"', "c:\\x"])).toBe(
    '{"a",NULL,NULL,3,true,"say \\"hi\\"","c:\\\\x"}',
  );
  expect(pgArray([])).toBe("{}");
  expect(pgUnnest(["a", "b"], { b: "int" })).toBe("unnest(cast($1 as text[]), cast($2 as int[])) as r(a, b)");
  expect(
    pgColumns(
      [
        { a: "x", b: 1 },
        { a: null, b: 2 },
      ],
      ["b", "a"],
    ),
  ).toEqual(["{1,2}", '{"x",NULL}']);
});

for (const target of await databaseTargets()) {
  describe.skipIf(!target.available)(`array literals on ${target.name}${target.reason}`, () => {
    let database: Database;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      ({ database, cleanup } = await target.open());
    });
    afterAll(() => cleanup());

    const run = <R>(text: string, parameters: unknown[]) =>
      database.kysely.executeQuery<R>(CompiledQuery.raw(text, parameters));

    it("reads back every text exactly, NULL as NULL and the word NULL as a word", async () => {
      const values = [...AWKWARD, null];
      const { rows } = await run<{ v: string | null; n: number }>(
        "select v, n from unnest(cast($1 as text[])) with ordinality as r(v, n) order by n",
        [pgArray(values)],
      );
      expect(rows.map((r) => r.v)).toEqual(values);
    });

    it("carries typed columns side by side: integers, booleans and JSON documents with quotes inside", async () => {
      const rows = AWKWARD.map((text, i) => ({
        id: text,
        n: i - 3,
        ok: i % 2 === 0,
        doc: JSON.stringify({ text, list: [i, "x\\y"] }),
      }));
      const read = await run<{ id: string; n: number; ok: boolean; doc: unknown }>(
        `select id, n, ok, doc from ${pgUnnest(["id", "n", "ok", "doc"], { n: "int", ok: "boolean", doc: "jsonb" })}`,
        pgColumns(rows, ["id", "n", "ok", "doc"]),
      );
      // Compared by id: what matters is that each row's columns stay together.
      const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      expect(
        read.rows.map((r) => ({ ...r, doc: typeof r.doc === "string" ? JSON.parse(r.doc) : r.doc })).sort(byId),
      ).toEqual(rows.map((r) => ({ ...r, doc: JSON.parse(r.doc) })).sort(byId));
    });
  });
}
