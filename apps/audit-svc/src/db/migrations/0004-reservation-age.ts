import type { Kysely } from "kysely";

/**
 * Finished reservations are deleted once they are old (see `pruneReservations`). Rows are added in
 * time order, so a block-range index finds the old ones at almost no cost per insert: a btree on
 * `created_at` would add an index entry to every model call.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex("reservations_created_brin")
    .on("reservations")
    .using("brin")
    .column("created_at")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("reservations_created_brin").execute();
}
