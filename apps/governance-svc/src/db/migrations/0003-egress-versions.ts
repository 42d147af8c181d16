import type { Kysely } from "kysely";

/**
 * The policy versions each sandbox's egress proxy last had its destinations decided under
 * (written when they change, read by the drift audit).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("egress_versions")
    .addColumn("sandbox_id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("project_id", "text")
    .addColumn("policies", "jsonb", (c) => c.notNull())
    .addColumn("decided_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("egress_versions_org").on("egress_versions").column("org_id").execute();
}
