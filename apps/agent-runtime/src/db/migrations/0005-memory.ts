import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("memory_note")
    .addColumn("rowid", "integer", (c) => c.primaryKey().autoIncrement())
    .addColumn("id", "text", (c) => c.notNull().unique())
    .addColumn("text", "text", (c) => c.notNull())
    .addColumn("source", "text", (c) => c.notNull())
    // Float32 little-endian, EMBEDDING_DIMENSIONS values; null until embedded.
    .addColumn("embedding", "blob")
    .addColumn("embedding_model", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("memory_note_embedding_model").on("memory_note").column("embedding_model").execute();
  // Text index: rowids are the notes' rowids (kept in step by the store).
  await sql`create virtual table memory_fts using fts5(text, tokenize = 'porter unicode61')`.execute(db);
}
