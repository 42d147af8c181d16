import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { Kysely, type SqliteDatabase, SqliteDialect, type SqliteStatement } from "kysely";
import { type MigrationProvider, Migrator } from "kysely/migration";
import { startCheckpointer } from "./checkpointer.ts";
import { protectDatabaseFiles } from "./file-modes.ts";
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
  if (path !== ":memory:") {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    protectDatabaseFiles(path);
  }
  const sqlite = new Database(path);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  const db = new Kysely<RuntimeDatabase>({ dialect: new SqliteDialect({ database: cachingStatements(sqlite) }) });
  await migrateToLatest(db);
  const checkpointer = path === ":memory:" ? undefined : startCheckpointer(sqlite, path);
  return {
    db,
    sqlite,
    async close() {
      await checkpointer?.close();
      await db.destroy();
    },
  };
}

/** Distinct SQL texts kept prepared; queries built with variable `in (…)` lists would grow it without bound. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely's SQLite driver prepares every query afresh, which costs more than running it (a
 * profile of the receiver benchmark showed `prepare` as the top frame). The queries are the same
 * few SQL texts over and over, so their prepared statements are kept and reused. Safe because
 * better-sqlite3 runs a statement synchronously to completion (Kysely never streams here), and a
 * schema change re-prepares a statement by itself.
 */
export function cachingStatements(sqlite: Database.Database): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    prepare(sql) {
      let statement = cache.get(sql);
      if (!statement) {
        statement = sqlite.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        cache.set(sql, statement);
      }
      return statement;
    },
    close() {
      cache.clear();
      sqlite.close();
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
