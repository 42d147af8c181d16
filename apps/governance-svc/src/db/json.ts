import { type RawBuilder, sql } from "kysely";

/** A jsonb parameter that both drivers (postgres.js and PGlite) store as an object, not a JSON string. */
export function jsonb(value: unknown): RawBuilder<unknown> {
  return sql`${JSON.stringify(value)}::text::jsonb`;
}
