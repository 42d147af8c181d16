import { type Kysely, sql } from "kysely";

/**
 * A user's personal tokens (bound to no organization), for their list and for the count that the
 * `personal-api-tokens` limit takes on every device sign-in.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex("api_tokens_personal_idx")
    .on("api_tokens")
    .columns(["user_id", "id"])
    .where(sql.ref("org_id"), "is", null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("api_tokens_personal_idx").execute();
}
