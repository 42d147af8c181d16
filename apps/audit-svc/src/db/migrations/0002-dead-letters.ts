import { type Kysely, sql } from "kysely";

/**
 * Events the consumer could not store because of their content (a value Postgres rejects, such as
 * a NUL character). They are kept here, never dropped, so an operator can inspect and replay them.
 * The payload is the event as JSON text: `text` holds `\u0000` as an escape where `jsonb` would not.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("dead_letters")
    .addColumn("event_id", "text", (c) => c.primaryKey())
    .addColumn("topic", "text", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("error", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("dead_letters").execute();
}
