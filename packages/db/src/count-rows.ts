import type { SelectQueryBuilder } from "kysely";

/** How many rows `query` (a filtered `selectFrom`) matches: `count(*)`, as a number. */
export async function countRows<DB, TB extends keyof DB>(query: SelectQueryBuilder<DB, TB, object>): Promise<number> {
  const row = await query.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow();
  return Number((row as { n: string | number | bigint }).n);
}
