import type { Kysely } from "kysely";

/** The author's display name as the principal carried it when the revision was written. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("revisions").addColumn("author_name", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("revisions").dropColumn("author_name").execute();
}
