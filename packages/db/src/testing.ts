import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { type Database, openDatabase } from "./database.ts";

export interface TestDatabaseTarget {
  name: "postgres" | "pglite";
  /** False when Postgres is not reachable outside CI; the suite should skip. */
  available: boolean;
  reason: string;
  open(): Promise<{ database: Database; cleanup(): Promise<void> }>;
}

/**
 * The two storage targets a service suite runs against: a fresh database on the test Postgres
 * server, and an in-memory PGlite. Use with `describe.each(await databaseTargets())`.
 */
export async function databaseTargets(): Promise<TestDatabaseTarget[]> {
  const pg = await requirePostgres();
  return [
    {
      name: "postgres",
      available: pg.available,
      reason: pg.reason,
      async open() {
        const created = await createTestDatabase();
        const database = await openDatabase(created.url, { max: 5 });
        return {
          database,
          async cleanup() {
            await database.close();
            await created.drop();
          },
        };
      },
    },
    {
      name: "pglite",
      available: true,
      reason: "",
      async open() {
        const database = await openDatabase("pglite://memory");
        return { database, cleanup: () => database.close() };
      },
    },
  ];
}
