import { CompiledQuery } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, pgArray, pgColumns, pgTemplated, pgTemplatedSource, pgUnnest } from "../src/index.ts";
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

interface Row {
  id: string;
  n: number;
  org: string | null;
  path: string | null;
  status: number | null;
}

const OWN = ["id", "n"] as const;
const SHARED = ["org", "path", "status"] as const;

// Shared values that a careless template key would confuse: NULL, "", "~", text that looks like
// a number, a value whose text runs into the next column's, and awkward characters.
const LOOK_ALIKES: Omit<Row, "id" | "n">[] = [
  { org: "org_a", path: "/v1/x", status: 200 },
  { org: "org_a", path: "/v1/x", status: null },
  { org: "org_a", path: null, status: 200 },
  { org: "org_a", path: "", status: 200 },
  { org: "org_a", path: "~", status: 200 },
  { org: null, path: "/v1/x", status: 200 },
  { org: "org_a/v1", path: "/x", status: 200 },
  { org: "org_a", path: "/v1/x2", status: 0 },
  { org: "200", path: "/v1/x", status: 200 },
  { org: 'q"uote\\', path: "{a,b} NULL\nline", status: 404 },
];

/** Rows in runs of one template, with templates coming back later (as a busy replica's batch does). */
function batch(size: number): Row[] {
  return Array.from({ length: size }, (_, i) => ({
    id: `row-${i}`,
    n: i,
    ...(LOOK_ALIKES[Math.floor(i / 3) % LOOK_ALIKES.length] as Omit<Row, "id" | "n">),
  }));
}

it("sends each distinct combination of the shared columns once, and a template number per row", () => {
  const rows = batch(60);
  const params = pgTemplated(rows, OWN, SHARED);
  expect(params).toHaveLength(OWN.length + 1 + SHARED.length);
  const numbers = (params[OWN.length] as string).slice(1, -1).split(",").map(Number);
  expect(numbers).toHaveLength(60);
  expect(Math.max(...numbers)).toBe(LOOK_ALIKES.length);
  expect(numbers.slice(0, 7)).toEqual([1, 1, 1, 2, 2, 2, 3]);
  // The 31st row starts the second pass over the templates: the same numbers again.
  expect(numbers.slice(30, 33)).toEqual([1, 1, 1]);
  expect(params[OWN.length + 1]).toBe(
    `{"org_a","org_a","org_a","org_a","org_a",NULL,"org_a/v1","org_a","200","q\\"uote\\\\"}`,
  );
  // undefined and null are one NULL: no second template for them.
  expect(
    pgTemplated(
      [
        { a: "x", b: null },
        { a: "y", b: undefined },
      ],
      ["a"],
      ["b"],
    ),
  ).toEqual(['{"x","y"}', "{1,1}", "{NULL}"]);
  expect(pgTemplated([], OWN, SHARED)).toEqual(["{}", "{}", "{}", "{}", "{}", "{}"]);
});

for (const target of await databaseTargets()) {
  describe.skipIf(!target.available)(`array literals and templated batches on ${target.name}${target.reason}`, () => {
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

    it("reads every row back whole, each with its own shared values", async () => {
      const rows = batch(200);
      const source = pgTemplatedSource(OWN, SHARED, { n: "int", status: "int" });
      const read = await run<Row>(
        `select id, n, org, path, status from ${source} order by n`,
        pgTemplated(rows, OWN, SHARED),
      );
      expect(read.rows).toEqual(rows);
    });
  });
}
