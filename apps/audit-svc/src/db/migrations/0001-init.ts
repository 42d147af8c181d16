import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("audit_records")
    .addColumn("event_id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text")
    .addColumn("project_id", "text")
    .addColumn("ts", "timestamptz", (c) => c.notNull())
    .addColumn("occurred_at", "timestamptz", (c) => c.notNull())
    .addColumn("principal_type", "text", (c) => c.notNull())
    .addColumn("principal_id", "text")
    .addColumn("principal_name", "text")
    .addColumn("action", "text", (c) => c.notNull())
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("target_type", "text")
    .addColumn("target_id", "text")
    .addColumn("targets", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("status", "integer")
    .addColumn("request_id", "text")
    .addColumn("ip", "text")
    .addColumn("user_agent", "text")
    .addColumn("method", "text")
    .addColumn("path", "text")
    .addColumn("details", "jsonb")
    .execute();
  // The page query (org, newest first, cursor) walks this index; it also enforces one record per
  // microsecond per organization. Records without an organization (NULL) are not constrained.
  await db.schema
    .createIndex("audit_records_org_ts")
    .on("audit_records")
    .unique()
    .columns(["org_id", "ts desc"])
    .execute();
  // Retention deletes by age across organizations; BRIN suits an append-mostly time column and is tiny.
  await db.schema.createIndex("audit_records_ts_brin").on("audit_records").using("brin").column("ts").execute();

  await db.schema
    .createTable("org_clocks")
    .addColumn("org_id", "text", (c) => c.primaryKey())
    .addColumn("last_ts", "timestamptz", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("usage_records")
    .addColumn("event_id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("project_id", "text")
    .addColumn("principal_type", "text", (c) => c.notNull())
    .addColumn("principal_id", "text", (c) => c.notNull())
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("route", "text", (c) => c.notNull())
    .addColumn("input_tokens", "bigint", (c) => c.notNull())
    .addColumn("output_tokens", "bigint", (c) => c.notNull())
    .addColumn("cache_read_tokens", "bigint", (c) => c.notNull())
    .addColumn("cache_write_tokens", "bigint", (c) => c.notNull())
    .addColumn("cost_micro_usd", "bigint", (c) => c.notNull())
    .addColumn("priced", "boolean", (c) => c.notNull())
    .addColumn("request_id", "text")
    .addColumn("reservation_id", "text")
    .addColumn("ts", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("usage_records_org_ts").on("usage_records").columns(["org_id", "ts"]).execute();

  await db.schema
    .createTable("spending_limits")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("project_id", "text")
    .addColumn("amount_micro_usd", "bigint", (c) => c.notNull())
    .addColumn("period", "text", (c) => c.notNull())
    .addColumn("alert_thresholds", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("spending_limits_org").on("spending_limits").columns(["org_id"]).execute();

  await db.schema
    .createTable("spend_counters")
    .addColumn("limit_id", "text", (c) => c.notNull().references("spending_limits.id").onDelete("cascade"))
    .addColumn("period_start", "timestamptz", (c) => c.notNull())
    .addColumn("spent_micro_usd", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("reserved_micro_usd", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("alerted_threshold", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("reached", "boolean", (c) => c.notNull().defaultTo(false))
    .addPrimaryKeyConstraint("spend_counters_pk", ["limit_id", "period_start"])
    .execute();

  await db.schema
    .createTable("reservations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("project_id", "text")
    .addColumn("amount_micro_usd", "bigint", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("settled_micro_usd", "bigint")
    .addColumn("request_id", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("reservations_active_expiry")
    .on("reservations")
    .column("expires_at")
    .where(sql.ref("state"), "=", "active")
    .execute();

  await db.schema
    .createTable("reservation_holds")
    .addColumn("reservation_id", "text", (c) => c.notNull().references("reservations.id").onDelete("cascade"))
    .addColumn("limit_id", "text", (c) => c.notNull())
    .addColumn("period_start", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("reservation_holds_pk", ["reservation_id", "limit_id"])
    .addForeignKeyConstraint(
      "reservation_holds_counter",
      ["limit_id", "period_start"],
      "spend_counters",
      ["limit_id", "period_start"],
      (fk) => fk.onDelete("cascade"),
    )
    .execute();
}
