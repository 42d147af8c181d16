import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("connectors")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("project_id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("url", "text")
    .addColumn("spec_url", "text")
    .addColumn("base_url", "text")
    .addColumn("headers", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("credential_id", "text")
    .addColumn("include", "jsonb")
    .addColumn("exclude", "jsonb")
    .addColumn("discovery_interval_minutes", "integer")
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("last_error", "text")
    .addColumn("last_discovered_at", "timestamptz")
    .addColumn("next_discovery_at", "timestamptz")
    .addColumn("version", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("tools", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("tools_hash", "text", (c) => c.notNull())
    .addColumn("tool_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // The list query (a project's connectors by id) and name uniqueness within a project.
  await db.schema
    .createIndex("connectors_project_name")
    .on("connectors")
    .columns(["project_id", "name"])
    .unique()
    .execute();
  await db.schema.createIndex("connectors_project_id").on("connectors").columns(["project_id", "id"]).execute();
  await db.schema
    .createIndex("connectors_next_discovery")
    .on("connectors")
    .column("next_discovery_at")
    .where(sql.ref("next_discovery_at"), "is not", null)
    .execute();

  await db.schema
    .createTable("connector_pending_specs")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("connector_id", "text", (c) => c.notNull().references("connectors.id").onDelete("cascade"))
    .addColumn("base_version", "integer", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("tools", "jsonb", (c) => c.notNull())
    .addColumn("tools_hash", "text", (c) => c.notNull())
    .addColumn("warnings", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("created_by", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("promoted_at", "timestamptz")
    .addColumn("promoted_by", "text")
    .execute();
  await db.schema
    .createIndex("connector_pending_specs_connector")
    .on("connector_pending_specs")
    .columns(["connector_id", "id"])
    .execute();

  // Visibility is kept by tool name, apart from the tools, so it survives promotions.
  await db.schema
    .createTable("connector_entries")
    .addColumn("connector_id", "text", (c) => c.notNull().references("connectors.id").onDelete("cascade"))
    .addColumn("entry_name", "text", (c) => c.notNull())
    .addColumn("visibility", "text", (c) => c.notNull())
    .addColumn("teams", "jsonb")
    .addColumn("updated_by", "text")
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("connector_entries_pk", ["connector_id", "entry_name"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("connector_entries").ifExists().execute();
  await db.schema.dropTable("connector_pending_specs").ifExists().execute();
  await db.schema.dropTable("connectors").ifExists().execute();
}
