import { createHash } from "node:crypto";
import { type Kysely, sql } from "kysely";
import { type Migration, type MigrationProvider, Migrator } from "kysely/migration";
import type { Database } from "./database.ts";

/** Migrations in order of application; the key is the migration's name (e.g. `0001_init`). */
export type MigrationList = Record<string, Migration>;

function lockKey(schema: string): bigint {
  // A stable 63-bit key per schema for pg_advisory_lock.
  return BigInt(`0x${createHash("sha256").update(`agentplane:migrate:${schema}`).digest("hex").slice(0, 15)}`);
}

/**
 * Creates the service's schema and applies its migrations, holding a Postgres advisory lock so
 * replicas that start together migrate once. Throws when a migration fails.
 */
export async function migrateToLatest(
  database: Database,
  schema: string,
  migrations: MigrationList,
): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations };
  return database.kysely.connection().execute(async (conn) => {
    const key = lockKey(schema).toString();
    await sql`select pg_advisory_lock(${sql.raw(key)})`.execute(conn);
    try {
      await sql`create schema if not exists ${sql.id(schema)}`.execute(conn);
      const migrator = new Migrator({
        db: conn.withSchema(schema) as Kysely<unknown>,
        provider,
        migrationTableSchema: schema,
      });
      const { error, results } = await migrator.migrateToLatest();
      if (error) {
        const failed = results?.find((r) => r.status === "Error")?.migrationName;
        throw new Error(`migration ${failed ?? "?"} of schema ${schema} failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
      return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
    } finally {
      await sql`select pg_advisory_unlock(${sql.raw(key)})`.execute(conn);
    }
  });
}
