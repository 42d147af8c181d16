import type { Kysely } from "kysely";

/**
 * Every start counts its organization's sandboxes that are up (`running-sandboxes`): by
 * organization and state, the count reads only those, however many stopped ones it keeps.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("sandboxes_org_id_state").on("sandboxes").columns(["org_id", "state"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("sandboxes_org_id_state").execute();
}
