import { type Kysely, sql } from "kysely";

/** Browser sessions of the admin console: only the SHA-256 of the cookie's secret is stored. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("browser_sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("api_token_id", "text", (c) => c.references("api_tokens.id").onDelete("cascade"))
    .addColumn("via", "text", (c) => c.notNull())
    .addColumn("secret_hash", "text", (c) => c.notNull())
    .addColumn("user_agent", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("last_used_at", "timestamptz")
    .addColumn("revoked_at", "timestamptz")
    .execute();
  await db.schema.createIndex("browser_sessions_user").on("browser_sessions").columns(["user_id", "id"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("browser_sessions").execute();
}
