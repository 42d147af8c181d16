import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { type MigrationProvider, Migrator } from "kysely/migration";
import { migrations } from "./migrations/index.ts";
import type { RuntimeDatabase } from "./schema/index.ts";

export interface RuntimeDb {
  /** The typed query builder for everything that is not on the webhook accept path. */
  db: Kysely<RuntimeDatabase>;
  /** The raw connection: prepared statements for the hot accept path and synchronous transactions. */
  sqlite: Database.Database;
  close(): Promise<void>;
}

/**
 * Opens the agent database in WAL mode. `synchronous=NORMAL` keeps every committed transaction
 * across a process crash (kill -9): WAL frames are in the OS page cache once the commit returns;
 * only a power loss can drop the last commits, which is the usual SQLite WAL trade-off.
 */
export async function openDatabase(path: string): Promise<RuntimeDb> {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  const db = new Kysely<RuntimeDatabase>({ dialect: new SqliteDialect({ database: sqlite }) });
  await migrateToLatest(db);
  return {
    db,
    sqlite,
    async close() {
      await db.destroy();
    },
  };
}

export async function migrateToLatest(db: Kysely<RuntimeDatabase>): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrations };
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    throw new Error(`database migration ${failed?.migrationName ?? ""} failed`, { cause: error });
  }
}
