import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("policies")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("project_id", "text")
    // The org id for org policies, the project id for project ones: names are unique per scope.
    .addColumn("scope_key", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("labels", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("latest_version", "integer", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addUniqueConstraint("policies_scope_name", ["scope_key", "name"])
    .execute();
  await db.schema.createIndex("policies_org").on("policies").columns(["org_id", "id"]).execute();

  await db.schema
    .createTable("policy_versions")
    .addColumn("policy_id", "text", (c) => c.notNull().references("policies.id").onDelete("cascade"))
    .addColumn("version", "integer", (c) => c.notNull())
    .addColumn("cedar", "text", (c) => c.notNull())
    .addColumn("rules", "jsonb", (c) => c.notNull())
    .addColumn("author", "text", (c) => c.notNull())
    .addColumn("reason", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("policy_versions_pk", ["policy_id", "version"])
    .execute();

  await db.schema
    .createTable("bindings")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("project_id", "text")
    .addColumn("policy_id", "text", (c) => c.notNull().references("policies.id").onDelete("restrict"))
    // NULL follows the policy's latest version.
    .addColumn("version", "integer")
    .addColumn("mode", "text", (c) => c.notNull())
    .addColumn("target", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("created_by", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("bindings_org").on("bindings").columns(["org_id", "id"]).execute();
  await db.schema.createIndex("bindings_policy").on("bindings").column("policy_id").execute();

  await db.schema
    .createTable("credentials")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("project_id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("labels", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("metadata", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("secret_version", "integer", (c) => c.notNull())
    // Envelope: the fields sealed under a per-record data key, the data key wrapped by the master key.
    .addColumn("sealed", "text", (c) => c.notNull())
    .addColumn("wrapped_key", "text", (c) => c.notNull())
    .addColumn("key_id", "text", (c) => c.notNull())
    // The secret before the last rotation, usable until previous_expires_at.
    .addColumn("previous_sealed", "text")
    .addColumn("previous_wrapped_key", "text")
    .addColumn("previous_key_id", "text")
    .addColumn("previous_expires_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addColumn("rotated_at", "timestamptz")
    .addColumn("last_used_at", "timestamptz")
    .addColumn("use_count", "bigint", (c) => c.notNull().defaultTo(0))
    .addUniqueConstraint("credentials_project_name", ["project_id", "name"])
    .execute();

  await db.schema
    .createTable("replicas")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("seen_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("leases")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("holder", "text", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("drift_reports")
    .addColumn("org_id", "text", (c) => c.primaryKey())
    .addColumn("audited_at", "timestamptz", (c) => c.notNull())
    .addColumn("report", "jsonb", (c) => c.notNull())
    .execute();
}
