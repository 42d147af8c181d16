import type { Kysely } from "kysely";

/** The revision whose tar archive the sandbox's next start puts back into its workspace (a rollback). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("sandboxes").addColumn("restore_revision", "integer").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("sandboxes").dropColumn("restore_revision").execute();
}
