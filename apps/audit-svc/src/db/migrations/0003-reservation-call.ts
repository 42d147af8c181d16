import type { Kysely } from "kysely";

/**
 * What a reservation was for (caller, provider, model, route), so that a reservation whose call
 * never reported its usage (a proxy crash mid-stream) is settled at its estimate as a usage record
 * that says which call it was.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("reservations").addColumn("call", "jsonb").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("reservations").dropColumn("call").execute();
}
