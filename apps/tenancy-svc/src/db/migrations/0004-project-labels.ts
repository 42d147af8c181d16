import { type Kysely, sql } from "kysely";

/** Project labels (what organization policy bindings select projects by). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("projects")
    .addColumn("labels", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("projects").dropColumn("labels").execute();
}
