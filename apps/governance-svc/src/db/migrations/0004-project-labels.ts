import type { Kysely } from "kysely";

/** Project labels as tenancy publishes them, for organization bindings that select projects by label. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("project_labels")
    .addColumn("project_id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("labels", "jsonb", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("project_labels_org").on("project_labels").column("org_id").execute();
}
