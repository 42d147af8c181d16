import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { initialiseEmbeddedInChild, openDatabase } from "../src/index.ts";

const root = mkdtempSync(join(tmpdir(), "embedded-init-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("initialising an embedded database in a child process", () => {
  it("initialises a new directory once, which then opens as a restart does", async () => {
    const dir = join(root, "pgdata");
    expect(await initialiseEmbeddedInChild(dir)).toBe(true);
    expect(existsSync(join(dir, "PG_VERSION"))).toBe(true);
    expect(await initialiseEmbeddedInChild(dir)).toBe(false);
    const database = await openDatabase(`pglite://${dir}`);
    try {
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.kysely);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await database.close();
    }
  }, 60_000);

  it("fails naming the directory and the child's reason", async () => {
    const file = join(root, "a-file");
    writeFileSync(file, "");
    await expect(initialiseEmbeddedInChild(join(file, "pgdata"))).rejects.toThrow(
      /initialising the embedded database in .*a-file\/pgdata failed \(exit 1\): \S/,
    );
  }, 60_000);
});
