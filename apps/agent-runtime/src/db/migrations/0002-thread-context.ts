import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  // The model's view of a thread: one rolling summary standing for every message up to through_seq.
  await db.schema
    .createTable("thread_context")
    .addColumn("thread_id", "text", (c) => c.primaryKey().references("thread.id").onDelete("cascade"))
    .addColumn("summary", "text")
    .addColumn("through_seq", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("compactions", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("context_tokens", "integer")
    .addColumn("model_id", "text")
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
}
