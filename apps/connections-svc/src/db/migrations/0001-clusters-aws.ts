import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("clusters")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("project_id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("labels", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("tunnel_token_id", "text", (c) => c.notNull().unique())
    .addColumn("tunnel_token_hash", "text", (c) => c.notNull())
    .addColumn("tunnel_replica", "text")
    .addColumn("tunnel_url", "text")
    .addColumn("tunnel_connection_id", "text")
    .addColumn("tunnel_expires_at", "timestamptz")
    .addColumn("first_connected_at", "timestamptz")
    .addColumn("disconnected_at", "timestamptz")
    .addColumn("last_heartbeat_at", "timestamptz")
    .addColumn("relay_version", "text")
    .addColumn("kubernetes_version", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // The list query: a project's clusters by id (time-sortable), cursor after the last id.
  await db.schema.createIndex("clusters_project_id").on("clusters").columns(["project_id", "id"]).execute();

  await db.schema
    .createTable("aws_connections")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("project_id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("credential_id", "text", (c) => c.notNull())
    .addColumn("default_region", "text", (c) => c.notNull())
    .addColumn("endpoints", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("labels", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("aws_connections_project_id")
    .on("aws_connections")
    .columns(["project_id", "id"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("aws_connections").execute();
  await db.schema.dropTable("clusters").execute();
}
