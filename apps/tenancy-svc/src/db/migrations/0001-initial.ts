import { type Kysely, sql } from "kysely";

/** The tenancy schema: installation, identities, organizations, teams, projects with keys, tokens. */
export async function up(db: Kysely<unknown>): Promise<void> {
  const now = sql`now()`;
  await db.schema
    .createTable("installation")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("installation_id", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("setup_code_hash", "text")
    .addColumn("activated_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable("users")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("email", "text")
    .addColumn("display_name", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("users_email_idx").on("users").expression(sql`lower(email)`).execute();

  await db.schema
    .createTable("user_identities")
    .addColumn("issuer", "text", (c) => c.notNull())
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addPrimaryKeyConstraint("user_identities_pk", ["issuer", "subject"])
    .execute();

  await db.schema
    .createTable("orgs")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable("org_members")
    .addColumn("org_id", "text", (c) => c.notNull().references("orgs.id").onDelete("cascade"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addPrimaryKeyConstraint("org_members_pk", ["org_id", "user_id"])
    .execute();
  await db.schema.createIndex("org_members_user_idx").on("org_members").column("user_id").execute();

  await db.schema
    .createTable("projects")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull().references("orgs.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("projects_org_idx").on("projects").columns(["org_id", "id"]).execute();

  await db.schema
    .createTable("project_members")
    .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("project_members_pk", ["project_id", "user_id"])
    .execute();

  await db.schema
    .createTable("teams")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull().references("orgs.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("teams_org_idx").on("teams").columns(["org_id", "id"]).execute();

  await db.schema
    .createTable("team_members")
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addPrimaryKeyConstraint("team_members_pk", ["team_id", "user_id"])
    .execute();
  await db.schema.createIndex("team_members_user_idx").on("team_members").column("user_id").execute();

  await db.schema
    .createTable("team_projects")
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("team_projects_pk", ["team_id", "project_id"])
    .execute();
  await db.schema.createIndex("team_projects_project_idx").on("team_projects").column("project_id").execute();

  await db.schema
    .createTable("signing_keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("public_jwk", "text", (c) => c.notNull())
    .addColumn("private_key_enc", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addColumn("published_until", "timestamptz")
    .execute();
  await db.schema
    .createIndex("signing_keys_project_idx")
    .on("signing_keys")
    .columns(["project_id", "status"])
    .execute();
  // At most one current key per project, whatever races between rotations.
  await db.schema
    .createIndex("signing_keys_one_current")
    .on("signing_keys")
    .column("project_id")
    .unique()
    .where(sql.ref("status"), "=", "current")
    .execute();

  await db.schema
    .createTable("invitations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull().references("orgs.id").onDelete("cascade"))
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("invited_by", "text", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addColumn("responded_at", "timestamptz")
    .execute();
  await db.schema.createIndex("invitations_org_idx").on("invitations").columns(["org_id", "id"]).execute();
  await db.schema.createIndex("invitations_email_idx").on("invitations").expression(sql`lower(email)`).execute();

  await db.schema
    .createTable("api_tokens")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.references("orgs.id").onDelete("cascade"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("project_id", "text", (c) => c.references("projects.id").onDelete("cascade"))
    .addColumn("secret_hash", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("prefix", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addColumn("last_used_at", "timestamptz")
    .addColumn("expires_at", "timestamptz")
    .addColumn("revoked_at", "timestamptz")
    .execute();
  await db.schema.createIndex("api_tokens_org_idx").on("api_tokens").columns(["org_id", "id"]).execute();
  await db.schema.createIndex("api_tokens_hash_idx").on("api_tokens").columns(["kind", "secret_hash"]).execute();

  await db.schema
    .createTable("activation_sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("user_code", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("interval_seconds", "integer", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("last_polled_at", "timestamptz")
    .addColumn("failed_attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("token_enc", "text")
    .addColumn("org_id", "text")
    .addColumn("user_id", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("activation_sessions_code_idx").on("activation_sessions").column("user_code").execute();
}

export async function down(): Promise<void> {
  // Forward-only: the schema is dropped as a whole when a service is removed.
}
