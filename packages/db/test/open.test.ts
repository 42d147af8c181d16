import { randomBytes } from "node:crypto";
import { requirePostgres, TEST_POSTGRES_URL } from "@agentplane/testkit";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { DatabaseUnavailableError, openDatabase } from "../src/index.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`opening a Postgres database${pg.reason}`, () => {
  const name = `open_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;

  afterAll(async () => {
    const admin = postgres(TEST_POSTGRES_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });

  it("creates a missing database once, even when several replicas start together", async () => {
    const created: string[] = [];
    const dbs = await Promise.all(
      [1, 2, 3].map(() => openDatabase(url.toString(), { max: 1, onCreated: (n) => created.push(n) })),
    );
    for (const db of dbs) {
      const rows = await db.kysely.selectNoFrom((eb) => eb.val(1).as("one")).execute();
      expect(rows).toHaveLength(1);
      await db.close();
    }
    // Each replica that saw the database missing tries; exactly the database asked for exists.
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created)).toEqual(new Set([name]));
  });

  it("refuses to create the database when told not to, with one line that says what to do", async () => {
    const other = new URL(url);
    other.pathname = `/${name}_absent`;
    const err = await openDatabase(other.toString(), { createIfMissing: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect((err as Error).message).toMatch(/does not exist .*createdb/);
    expect((err as Error).message).not.toContain("\n");
  });

  it("names the server and the variable when Postgres cannot be reached", async () => {
    const err = await openDatabase("postgres://postgres:secret@127.0.0.1:1/x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect((err as Error).message).toMatch(/cannot reach Postgres at 127\.0\.0\.1:1 \(DATABASE_URL=/);
    expect((err as Error).message).not.toContain("secret");
  });
});
