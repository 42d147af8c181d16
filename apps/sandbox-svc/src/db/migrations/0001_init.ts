import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("sandboxes")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("project_id", "text", (c) => c.notNull())
    .addColumn("org_id", "text")
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("slug", "text", (c) => c.notNull().unique())
    .addColumn("image", "text", (c) => c.notNull())
    .addColumn("command", "jsonb")
    .addColumn("env", "jsonb", (c) => c.notNull())
    .addColumn("resources", "jsonb", (c) => c.notNull())
    .addColumn("ports", "jsonb", (c) => c.notNull())
    .addColumn("idle_timeout_seconds", "integer", (c) => c.notNull())
    .addColumn("labels", "jsonb", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("current_revision", "integer", (c) => c.notNull())
    .addColumn("last_error", "text")
    .addColumn("platform_token_id", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addColumn("started_at", "timestamptz")
    .addColumn("last_activity_at", "timestamptz")
    .execute();
  // Listing a project's sandboxes newest first, paged by id.
  await db.schema.createIndex("sandboxes_project_id").on("sandboxes").columns(["project_id", "id"]).execute();
  await db.schema
    .createTable("revisions")
    .addColumn("sandbox_id", "text", (c) => c.notNull().references("sandboxes.id").onDelete("cascade"))
    .addColumn("revision", "integer", (c) => c.notNull())
    .addColumn("spec", "jsonb", (c) => c.notNull())
    .addColumn("author_type", "text", (c) => c.notNull())
    .addColumn("author_id", "text", (c) => c.notNull())
    .addColumn("reason", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("revisions_pk", ["sandbox_id", "revision"])
    .execute();
  await db.schema
    .createTable("sandbox_tokens")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("project_id", "text", (c) => c.notNull())
    .addColumn("org_id", "text")
    .addColumn("sandbox_id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("secret_hash", "text", (c) => c.notNull())
    .addColumn("created_by", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz")
    .addColumn("last_used_at", "timestamptz")
    .addColumn("revoked_at", "timestamptz")
    .execute();
  await db.schema.createIndex("sandbox_tokens_project_id").on("sandbox_tokens").columns(["project_id"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("sandbox_tokens").execute();
  await db.schema.dropTable("revisions").execute();
  await db.schema.dropTable("sandboxes").execute();
}
