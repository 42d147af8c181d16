import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("team_chat_channel")
    .addColumn("channel_id", "text", (c) => c.primaryKey())
    .addColumn("name", "text")
    .addColumn("linked_at", "text", (c) => c.notNull())
    .addColumn("is_main", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  // Slack delivers events at least once: an event id seen here is acked and dropped.
  await db.schema
    .createTable("team_chat_event")
    .addColumn("event_id", "text", (c) => c.primaryKey())
    .addColumn("received_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("team_chat_event_received_at").on("team_chat_event").column("received_at").execute();
  // Outbound posts, kept until every chunk is posted: a failed one is retried later, never dropped.
  await db.schema
    .createTable("team_chat_delivery")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("channel_id", "text", (c) => c.notNull())
    .addColumn("thread_ts", "text")
    .addColumn("text", "text", (c) => c.notNull())
    .addColumn("chunks_sent", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("last_error", "text")
    .addColumn("next_attempt_at", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("team_chat_delivery_pending")
    .on("team_chat_delivery")
    .columns(["status", "next_attempt_at"])
    .execute();
}
