import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("schedule")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull().unique())
    .addColumn("cron", "text")
    .addColumn("at", "text")
    .addColumn("every_seconds", "integer")
    .addColumn("timezone", "text")
    .addColumn("prompt", "text", (c) => c.notNull())
    .addColumn("deliver_to", "text", (c) => c.notNull())
    .addColumn("active", "integer", (c) => c.notNull())
    .addColumn("next_run_at", "text")
    .addColumn("last_run_at", "text")
    .addColumn("consecutive_failures", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("paused_reason", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("schedule_run")
    .addColumn("seq", "integer", (c) => c.primaryKey().autoIncrement())
    .addColumn("id", "text", (c) => c.notNull().unique())
    .addColumn("schedule_id", "text", (c) => c.notNull().references("schedule.id").onDelete("cascade"))
    .addColumn("trigger", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("scheduled_for", "text", (c) => c.notNull())
    .addColumn("started_at", "text")
    .addColumn("finished_at", "text")
    .addColumn("result", "text")
    .addColumn("error", "text")
    .execute();
  await db.schema.createIndex("schedule_run_schedule_seq").on("schedule_run").columns(["schedule_id", "seq"]).execute();
}
