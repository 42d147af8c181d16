import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("webhook_subscription")
    .addColumn("verification_kind", "text", (c) => c.notNull().defaultTo("none"))
    .execute();
  await db.schema.alterTable("webhook_subscription").addColumn("verification_secret", "text").execute();
  await db.schema
    .alterTable("webhook_subscription")
    .addColumn("verification_signature_header", "text", (c) => c.notNull().defaultTo("X-Signature"))
    .execute();
  await db.schema
    .alterTable("webhook_subscription")
    .addColumn("verification_timestamp_header", "text", (c) => c.notNull().defaultTo("X-Timestamp"))
    .execute();
  await db.schema
    .alterTable("webhook_subscription")
    .addColumn("verification_tolerance_seconds", "integer", (c) => c.notNull().defaultTo(300))
    .execute();
  // Delivery ids seen in the last 24 h (pruned as new ones arrive), keyed per subscription.
  await db.schema
    .createTable("webhook_delivery")
    .addColumn("subscription", "text", (c) => c.notNull())
    .addColumn("delivery_id", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("run_id", "text")
    .addColumn("created_at", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("webhook_delivery_pk", ["subscription", "delivery_id"])
    .execute();
  await db.schema.createIndex("webhook_delivery_created").on("webhook_delivery").column("created_at").execute();
}
