import { type Kysely, sql } from "kysely";

/** Sign-in device flows: only the SHA-256 of the device code and of the user code is stored. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("device_authorizations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("device_code_hash", "text", (c) => c.notNull().unique())
    .addColumn("user_code_hash", "text", (c) => c.notNull())
    .addColumn("client_name", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("interval_seconds", "integer", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("last_polled_at", "timestamptz")
    .addColumn("user_id", "text", (c) => c.references("users.id").onDelete("cascade"))
    .addColumn("token_id", "text", (c) => c.references("api_tokens.id").onDelete("set null"))
    .addColumn("token_enc", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("decided_at", "timestamptz")
    .execute();
  await db.schema
    .createIndex("device_authorizations_user_code")
    .on("device_authorizations")
    .columns(["user_code_hash", "created_at"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("device_authorizations").execute();
}
