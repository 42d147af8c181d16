import { PGlite } from "@electric-sql/pglite";
import { Kysely } from "kysely";
import { PGliteDialect } from "kysely-pglite-dialect";
import { PostgresJSDialect } from "kysely-postgres-js";
import postgres from "postgres";
import { tracedDialect } from "./traced-dialect.ts";
import { startUpkeep, type UpkeepOptions } from "./upkeep.ts";

export type DatabaseKind = "postgres" | "pglite";

/**
 * One connection pool (Postgres) or one embedded engine (PGlite) for a process. Every service in
 * the process gets its own schema-qualified view of it through `forSchema()`.
 */
export interface Database {
  readonly kind: DatabaseKind;
  readonly url: string;
  // biome-ignore lint/suspicious/noExplicitAny: the root handle is untyped; services type their own view
  readonly kysely: Kysely<any>;
  forSchema<DB>(schema: string): Kysely<DB>;
  close(): Promise<void>;
}

const INT8_OID = 20;

function pgliteDir(url: string): string | undefined {
  const rest = url.slice("pglite://".length);
  return rest === "" || rest === "memory" ? undefined : rest;
}

export interface OpenDatabaseOptions {
  /** Pool size for Postgres (default 10). */
  max?: number;
  /**
   * Create the Postgres database named in the URL when it does not exist (default true), through
   * the server's `postgres` maintenance database. Replicas starting together race harmlessly.
   */
  createIfMissing?: boolean;
  /** Told once when the database had to be created. */
  onCreated?: (name: string) => void;
  /** PGlite only: its periodic vacuum and analyze (`startUpkeep`), which a Postgres server does itself. */
  upkeep?: UpkeepOptions;
}

/** A start-up failure with one line that says what to do; launchers print `message` alone. */
export class DatabaseUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DatabaseUnavailableError";
  }
}

const PG_INVALID_CATALOG_NAME = "3D000";
const PG_DUPLICATE_DATABASE = "42P04";
// Two CREATE DATABASE of the same name at once: the loser hits the catalog's unique index.
const PG_UNIQUE_VIOLATION = "23505";
const PG_OBJECT_IN_USE = "55006";

function pgCode(err: unknown): string | undefined {
  return (err as { code?: string } | undefined)?.code;
}

function endpointOf(url: string): { host: string; database: string } {
  const u = new URL(url);
  return { host: `${u.hostname || "localhost"}:${u.port || 5432}`, database: decodeURIComponent(u.pathname.slice(1)) };
}

async function createDatabase(url: string, database: string): Promise<void> {
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await sql.unsafe(`CREATE DATABASE "${database.replaceAll('"', '""')}"`);
        return;
      } catch (err) {
        if (pgCode(err) === PG_DUPLICATE_DATABASE || pgCode(err) === PG_UNIQUE_VIOLATION) return;
        // Two CREATE DATABASE at once: the template is busy for a moment.
        if (pgCode(err) === PG_OBJECT_IN_USE && attempt < 10) {
          await new Promise((r) => setTimeout(r, 100 + attempt * 100));
          continue;
        }
        throw err;
      }
    }
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** Checks the server is reachable and the database exists (creating it when asked). */
async function probePostgres(sql: postgres.Sql, url: string, options: OpenDatabaseOptions): Promise<void> {
  const { host, database } = endpointOf(url);
  try {
    await sql`select 1`;
    return;
  } catch (err) {
    if (pgCode(err) !== PG_INVALID_CATALOG_NAME) {
      const reason = (err as Error).message;
      throw new DatabaseUnavailableError(
        `cannot reach Postgres at ${host} (DATABASE_URL=${redactUrl(url)}): ${reason}. Is the server running and the URL right?`,
        { cause: err },
      );
    }
  }
  if (options.createIfMissing === false) {
    throw new DatabaseUnavailableError(
      `database "${database}" does not exist on ${host}: create it (createdb ${database}) or point DATABASE_URL at another`,
    );
  }
  try {
    await createDatabase(url, database);
  } catch (err) {
    throw new DatabaseUnavailableError(
      `database "${database}" does not exist on ${host} and could not be created: ${(err as Error).message}`,
      { cause: err },
    );
  }
  options.onCreated?.(database);
}

/**
 * The embedded database's server settings. Postgres's default 128 MB of shared buffers lives in
 * PGlite's WebAssembly memory, which never shrinks: most of the embedded platform's resident memory
 * at rest. The embedded mode's data is small and the files behind it stay in the OS page cache, so
 * 32 MB serves it; a larger installation belongs on Postgres.
 */
const EMBEDDED_START_PARAMS = [
  ...PGlite.defaultStartParams,
  "-c",
  "shared_buffers=32MB",
  "-c",
  "wal_buffers=1MB",
  "-c",
  "temp_buffers=2MB",
];

/** Opens `postgres://…`/`postgresql://…` with postgres.js, or `pglite://<dir>` / `pglite://memory` in process. */
export async function openDatabase(url: string, options: OpenDatabaseOptions = {}): Promise<Database> {
  if (url.startsWith("pglite://")) {
    const dir = pgliteDir(url);
    const pg = await PGlite.create({
      ...(dir ? { dataDir: dir } : {}),
      startParams: EMBEDDED_START_PARAMS,
      parsers: { [INT8_OID]: (value: string) => Number(value) },
    });
    const kysely = new Kysely({ dialect: tracedDialect(new PGliteDialect(pg)) });
    const upkeep = startUpkeep(kysely, options.upkeep);
    return wrap("pglite", url, kysely, async () => {
      await upkeep.stop();
      // Kysely closes the engine only when a query went through it. An engine left open keeps its
      // last timer armed (Postgres's idle flush of statistics, 10 s), and with it the process.
      await kysely.destroy();
      if (!pg.closed) await pg.close();
    });
  }
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
    const sql = postgres(url, {
      max: options.max ?? 10,
      onnotice: () => {},
      types: { bigint: { to: INT8_OID, from: [INT8_OID], serialize: (v: number) => String(v), parse: Number } },
    });
    try {
      await probePostgres(sql, url, options);
    } catch (err) {
      await sql.end({ timeout: 1 });
      throw err;
    }
    // A connection still reserved at close (work cut off by the shutdown) is closed after 5 s
    // instead of holding the close forever.
    return wrap("postgres", url, new Kysely({ dialect: tracedDialect(new PostgresJSDialect({ postgres: sql })) }), () =>
      sql.end({ timeout: 5 }),
    );
  }
  throw new Error(`DATABASE_URL must start with postgres://, postgresql:// or pglite:// (got ${redactUrl(url)})`);
}

// biome-ignore lint/suspicious/noExplicitAny: see Database.kysely
function wrap(kind: DatabaseKind, url: string, kysely: Kysely<any>, end?: () => Promise<void>): Database {
  let closed = false;
  return {
    kind,
    url,
    kysely,
    forSchema<DB>(schema: string) {
      return kysely.withSchema(schema) as unknown as Kysely<DB>;
    },
    async close() {
      if (closed) return;
      closed = true;
      await end?.();
      await kysely.destroy();
    },
  };
}

/** The URL without its password, for logs and errors. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/:[^:@/]*@/, ":***@");
  }
}
