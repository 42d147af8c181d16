import type { Kysely } from "kysely";

/** A workspace kept as a VolumeSnapshot: its name (the archive's data is then empty). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("workspace_archives").addColumn("ref", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("workspace_archives").dropColumn("ref").execute();
}
