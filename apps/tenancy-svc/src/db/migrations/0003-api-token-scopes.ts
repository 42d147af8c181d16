import type { Kysely } from "kysely";

/** The permissions an API token is restricted to (a JSON array), null for none beyond its role cap. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("api_tokens").addColumn("scopes", "jsonb").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("api_tokens").dropColumn("scopes").execute();
}
