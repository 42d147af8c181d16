import { type Kysely, sql } from "kysely";

/**
 * API tokens and invitations by when they stopped working (revoked, answered or expired, whichever
 * came first): the periodic prune deletes the old ones in batches. A token that is neither revoked
 * nor given an expiry has no such time and stays out of the index.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex("api_tokens_ended_at")
    .on("api_tokens")
    .expression(sql`least(revoked_at, expires_at)`)
    .where(sql`least(revoked_at, expires_at)`, "is not", null)
    .execute();
  await db.schema
    .createIndex("invitations_ended_at")
    .on("invitations")
    .expression(sql`least(responded_at, expires_at)`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("invitations_ended_at").execute();
  await db.schema.dropIndex("api_tokens_ended_at").execute();
}
