import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../src/index.ts";

interface TableStats {
  last_vacuum: Date | null;
  last_analyze: Date | null;
  n_dead_tup: number;
}

const stats = async (db: Database) =>
  (
    await sql<TableStats>`select last_vacuum, last_analyze, n_dead_tup from pg_stat_user_tables
      where schemaname = 'churn' and relname = 'items'`.execute(db.kysely)
  ).rows[0];

/** Rows an `explain` of a selective query expects: a guess without statistics, the count with them. */
const estimate = async (db: Database) => {
  const plan = await sql<{ "QUERY PLAN": string }>`explain select * from churn.items where state = 'rare'`.execute(
    db.kysely,
  );
  return Number(/rows=(\d+)/.exec(plan.rows[0]?.["QUERY PLAN"] ?? "")?.[1]);
};

async function churn(db: Database) {
  await sql`create schema churn`.execute(db.kysely);
  await sql`create table churn.items (id int primary key, state text not null)`.execute(db.kysely);
  await sql`insert into churn.items select g, case when g = 1 then 'rare' else 'common' end
    from generate_series(1, 20000) g`.execute(db.kysely);
  await sql`delete from churn.items where id > 10000`.execute(db.kysely);
}

async function until(check: () => Promise<boolean>, timeoutMs = 10_000) {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

// The embedded engine runs no autovacuum: the database vacuums and analyzes it on a timer.
describe("embedded upkeep", () => {
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  it("vacuums and analyzes every table on its timer: dead rows reclaimed, the planner's estimates right", async () => {
    db = await openDatabase("pglite://memory", { upkeep: { intervalMs: 300 } });
    await churn(db);
    const guess = await estimate(db);
    await until(async () => (await stats(db as Database))?.last_analyze != null);
    expect(await stats(db)).toMatchObject({ n_dead_tup: 0, last_vacuum: expect.any(Date) });
    // One row of 10,000 matches: without statistics the planner guessed far more.
    expect(guess).toBeGreaterThan(10);
    expect(await estimate(db)).toBe(1);
  });

  it("does nothing with an interval of 0", async () => {
    db = await openDatabase("pglite://memory", { upkeep: { intervalMs: 0 } });
    await churn(db);
    await new Promise((r) => setTimeout(r, 600));
    expect(await stats(db)).toMatchObject({ last_vacuum: null, last_analyze: null });
  });
});
