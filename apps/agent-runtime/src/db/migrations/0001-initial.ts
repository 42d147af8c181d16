import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("agent")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("team", "text", (c) => c.notNull())
    .addColumn("owner_user_id", "text", (c) => c.notNull())
    .addColumn("verbose", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("main_model", "text")
    .addColumn("heartbeat_model", "text")
    .addColumn("cron_model", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("setting")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("value", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("thread")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("title", "text", (c) => c.notNull())
    .addColumn("is_main", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("external_id", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("thread_kind_updated").on("thread").columns(["kind", "updated_at"]).execute();
  await db.schema
    .createTable("message")
    .addColumn("seq", "integer", (c) => c.primaryKey().autoIncrement())
    .addColumn("id", "text", (c) => c.notNull().unique())
    .addColumn("thread_id", "text", (c) => c.notNull().references("thread.id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("content", "text", (c) => c.notNull())
    .addColumn("text", "text", (c) => c.notNull())
    .addColumn("internal", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("message_thread_seq").on("message").columns(["thread_id", "seq"]).execute();
  await db.schema
    .createTable("webhook_subscription")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("description", "text", (c) => c.notNull())
    .addColumn("events", "text", (c) => c.notNull())
    .addColumn("deliver_to", "text", (c) => c.notNull())
    .addColumn("deliver_only", "integer", (c) => c.notNull())
    .addColumn("prompt", "text", (c) => c.notNull())
    .addColumn("active", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("webhook_run")
    .addColumn("seq", "integer", (c) => c.primaryKey().autoIncrement())
    .addColumn("id", "text", (c) => c.notNull().unique())
    .addColumn("subscription", "text", (c) => c.notNull())
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("prompt", "text", (c) => c.notNull())
    .addColumn("deliver_to", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("error", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("started_at", "text")
    .addColumn("finished_at", "text")
    .execute();
  await db.schema
    .createIndex("webhook_run_subscription_status_seq")
    .on("webhook_run")
    .columns(["subscription", "status", "seq"])
    .execute();
  await db.schema
    .createIndex("webhook_run_subscription_seq")
    .on("webhook_run")
    .columns(["subscription", "seq"])
    .execute();
  await sql`select 1`.execute(db);
}
