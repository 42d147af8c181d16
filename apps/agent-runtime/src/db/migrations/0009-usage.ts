import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  // One row per model call that returned (docs/decisions/0018-runtime-usage.md).
  await db.schema
    .createTable("model_call_usage")
    .addColumn("seq", "integer", (c) => c.primaryKey().autoIncrement())
    .addColumn("at", "text", (c) => c.notNull())
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("thread_id", "text")
    .addColumn("run_id", "text")
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("input_tokens", "integer", (c) => c.notNull())
    .addColumn("output_tokens", "integer", (c) => c.notNull())
    .addColumn("cache_read_tokens", "integer", (c) => c.notNull())
    .addColumn("cache_write_tokens", "integer", (c) => c.notNull())
    // Null when the model has no known price.
    .addColumn("cost_micro_usd", "integer")
    .execute();
  // The window filter and the retention's delete both read by time.
  await db.schema.createIndex("model_call_usage_at").on("model_call_usage").column("at").execute();
  // One row per voice session, written when admitted, rewritten as the call goes and when it ends.
  await db.schema
    .createTable("voice_session_usage")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("meeting_id", "text", (c) => c.notNull())
    .addColumn("thread_id", "text")
    .addColumn("realtime_model", "text", (c) => c.notNull())
    .addColumn("transcription_model", "text", (c) => c.notNull())
    .addColumn("started_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    // Null while the call goes on (or until the next start finds it interrupted).
    .addColumn("ended_at", "text")
    .addColumn("end_reason", "text")
    .addColumn("input_audio_seconds", "real", (c) => c.notNull())
    .addColumn("output_audio_seconds", "real", (c) => c.notNull())
    .addColumn("transcription_seconds", "real", (c) => c.notNull())
    .addColumn("responses", "integer", (c) => c.notNull())
    .addColumn("input_tokens", "integer", (c) => c.notNull())
    .addColumn("output_tokens", "integer", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("voice_session_usage_started_at")
    .on("voice_session_usage")
    .column("started_at")
    .execute();
}
