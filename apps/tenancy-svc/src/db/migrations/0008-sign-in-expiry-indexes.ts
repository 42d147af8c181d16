import type { Kysely } from "kysely";

/** Device sign-ins and browser sessions by expiry: the periodic prune deletes the old ones in batches. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex("device_authorizations_expires_at")
    .on("device_authorizations")
    .column("expires_at")
    .execute();
  await db.schema.createIndex("browser_sessions_expires_at").on("browser_sessions").column("expires_at").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("browser_sessions_expires_at").execute();
  await db.schema.dropIndex("device_authorizations_expires_at").execute();
}
