import { type Kysely, sql } from "kysely";
import { AUDIT_SCHEMA } from "../schema.ts";

/**
 * One spending limit per scope (the organization, or one of its projects) and period: with two,
 * which one a person means to change is ambiguous, and the lower one silently governs.
 *
 * A database may already hold such duplicates. Of each group the strictest limit (lowest amount;
 * the earliest created on a tie) is kept: it is the one that already stopped model calls first, so
 * nothing that was refused before is allowed after. The others are moved to
 * `spending_limit_duplicates` (the row as it was, and the id kept in its place) rather than lost,
 * and their counters go with them. See docs/decisions/0019-one-spending-limit-per-scope.md.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("spending_limit_duplicates")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("kept_id", "text", (c) => c.notNull())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("project_id", "text")
    .addColumn("amount_micro_usd", "bigint", (c) => c.notNull())
    .addColumn("period", "text", (c) => c.notNull())
    .addColumn("alert_thresholds", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addColumn("removed_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // Writers of an older version wait until the index exists, so none adds a duplicate meanwhile.
  await sql`lock table ${sql.table(`${AUDIT_SCHEMA}.spending_limits`)} in share row exclusive mode`.execute(db);
  const limits = db as unknown as Kysely<{ spending_limits: LimitRow; spending_limit_duplicates: LimitRow & Archived }>;
  const rows = await limits
    .selectFrom("spending_limits")
    .selectAll()
    .orderBy("org_id")
    .orderBy("amount_micro_usd")
    .orderBy("id")
    .execute();
  const kept = new Map<string, string>();
  const duplicates: (LimitRow & Archived)[] = [];
  for (const row of rows) {
    const key = JSON.stringify([row.org_id, row.project_id ?? "", row.period]);
    const keeper = kept.get(key);
    if (keeper) duplicates.push({ ...row, kept_id: keeper });
    else kept.set(key, row.id);
  }
  if (duplicates.length > 0) {
    await limits
      .insertInto("spending_limit_duplicates")
      .values(
        duplicates.map((d) => ({
          ...d,
          // jsonb reads back parsed (PGlite) or as its text (postgres.js); written back as text.
          alert_thresholds:
            typeof d.alert_thresholds === "string" ? d.alert_thresholds : JSON.stringify(d.alert_thresholds),
        })),
      )
      .execute();
    // Their spend counters (and the reservations' holds on them) cascade.
    await limits
      .deleteFrom("spending_limits")
      .where(
        "id",
        "in",
        duplicates.map((d) => d.id),
      )
      .execute();
  }

  await db.schema
    .createIndex("spending_limits_scope")
    .on("spending_limits")
    .unique()
    .columns([sql`org_id`, sql`(coalesce(project_id, ''))`, sql`period`])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("spending_limits_scope").execute();
  await db.schema.dropTable("spending_limit_duplicates").execute();
}

interface LimitRow {
  id: string;
  org_id: string;
  project_id: string | null;
  amount_micro_usd: string | number;
  period: string;
  alert_thresholds: unknown;
  created_at: Date;
  updated_at: Date;
}

interface Archived {
  kept_id: string;
}
