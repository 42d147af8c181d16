import type { Kysely } from "kysely";

// Verification secrets were stored in plain text. The column says which rows are sealed; the key
// is configuration, not schema, so the rows are sealed right after migrating, at start
// (`sealStoredSecrets` in src/secrets/secret-box.ts).
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("webhook_subscription")
    .addColumn("verification_secret_sealed", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}
