import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  // 1: remembered in a turn that was not the owner's, so every such turn may find it; 0: the
  // owner's (its turns alone find it). Notes from before are the owner's.
  await db.schema
    .alterTable("memory_note")
    .addColumn("shared", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}
