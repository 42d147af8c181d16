import type { Kysely } from "kysely";

/**
 * The session a browser session was opened from (null for one opened by a sign-in, a token or an
 * invitation), so that ending a session ends every one opened from it; indexed for that walk.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("browser_sessions")
    .addColumn("parent_session_id", "text", (c) => c.references("browser_sessions.id").onDelete("set null"))
    .execute();
  await db.schema
    .createIndex("browser_sessions_parent_session_id")
    .on("browser_sessions")
    .column("parent_session_id")
    .where("parent_session_id", "is not", null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("browser_sessions_parent_session_id").execute();
  await db.schema.alterTable("browser_sessions").dropColumn("parent_session_id").execute();
}
