import { PGlite } from "@electric-sql/pglite";
import { Kysely } from "kysely";
import { PGliteDialect } from "kysely-pglite-dialect";
import { PostgresJSDialect } from "kysely-postgres-js";
import postgres from "postgres";

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
}

/** Opens `postgres://…`/`postgresql://…` with postgres.js, or `pglite://<dir>` / `pglite://memory` in process. */
export async function openDatabase(url: string, options: OpenDatabaseOptions = {}): Promise<Database> {
  if (url.startsWith("pglite://")) {
    const dir = pgliteDir(url);
    const pg = await PGlite.create({
      ...(dir ? { dataDir: dir } : {}),
      parsers: { [INT8_OID]: (value: string) => Number(value) },
    });
    return wrap("pglite", url, new Kysely({ dialect: new PGliteDialect(pg) }));
  }
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
    const sql = postgres(url, {
      max: options.max ?? 10,
      onnotice: () => {},
      types: { bigint: { to: INT8_OID, from: [INT8_OID], serialize: (v: number) => String(v), parse: Number } },
    });
    return wrap("postgres", url, new Kysely({ dialect: new PostgresJSDialect({ postgres: sql }) }));
  }
  throw new Error(`DATABASE_URL must start with postgres://, postgresql:// or pglite:// (got ${redactUrl(url)})`);
}

// biome-ignore lint/suspicious/noExplicitAny: see Database.kysely
function wrap(kind: DatabaseKind, url: string, kysely: Kysely<any>): Database {
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
