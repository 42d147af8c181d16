import { type RawBuilder, sql } from "kysely";

/** A jsonb parameter both drivers (postgres.js, PGlite) store the same way: text cast by the server. */
export function jsonb<T>(value: T): RawBuilder<T> {
  return sql<T>`${JSON.stringify(value)}::text::jsonb`;
}
