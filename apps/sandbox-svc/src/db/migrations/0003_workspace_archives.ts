import { type Kysely, sql } from "kysely";

/** The workspace as it was when a revision stopped being current (a tar stream taken over exec). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("workspace_archives")
    .addColumn("sandbox_id", "text", (c) => c.notNull().references("sandboxes.id").onDelete("cascade"))
    .addColumn("revision", "integer", (c) => c.notNull())
    .addColumn("method", "text", (c) => c.notNull())
    .addColumn("size_bytes", "bigint", (c) => c.notNull())
    .addColumn("data", "bytea", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("workspace_archives_pk", ["sandbox_id", "revision"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("workspace_archives").execute();
}
