import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { openDatabase } from "@agentplane/db";
import { createTestDatabase, type TestDatabase } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVICE_MIGRATIONS } from "../src/migrate.ts";

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url));

/** `main.ts migrate`, as the chart's migration Job runs it. */
function migrate(url: string) {
  return run(process.execPath, [MAIN, "migrate"], { env: { ...process.env, DATABASE_URL: url }, timeout: 120_000 });
}

describe("main.ts migrate (the chart's migration Job)", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase("migrate");
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("migrates every service's schema, then finds nothing left to do", async () => {
    const first = await migrate(db.url);
    for (const { schema } of SERVICE_MIGRATIONS) expect(first.stdout).toMatch(new RegExp(`^${schema}: applied `, "m"));
    const database = await openDatabase(db.url);
    try {
      for (const { schema, migrations } of SERVICE_MIGRATIONS) {
        const rows = await database
          .forSchema<{ kysely_migration: { name: string } }>(schema)
          .selectFrom("kysely_migration")
          .select("name")
          .orderBy("name")
          .execute();
        expect(
          rows.map((r) => r.name),
          schema,
        ).toEqual(Object.keys(migrations).sort());
      }
    } finally {
      await database.close();
    }
    const again = await migrate(db.url);
    expect(again.stdout.trim().split("\n")).toEqual(SERVICE_MIGRATIONS.map(({ schema }) => `${schema}: up to date`));
  }, 240_000);

  it("says what is wrong in one line when the database is unreachable", async () => {
    const failed = await migrate("postgres://postgres@127.0.0.1:1/nowhere").then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toMatch(/^agentplane migrate: /);
  }, 120_000);
});
