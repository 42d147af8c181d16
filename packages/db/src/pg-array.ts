/**
 * Batches of rows sent to Postgres as one array per column (`unnest(cast($1 as text[]), ...)`)
 * instead of one JSON document of objects (`jsonb_to_recordset`): Postgres reads an array literal
 * for about a third of the CPU it spends turning JSON objects into records, and the text goes
 * through any driver as a plain string parameter (Postgres and PGlite alike).
 */

/** A column value: text, a number, a boolean, or NULL (`null` or `undefined`). */
export type ArrayElement = string | number | boolean | null | undefined;

const SPECIAL = /["\\]/;
const SPECIALS = /["\\]/g;

/** One element of an array literal: NULL, or the value quoted with `"` and `\` escaped. */
function element(value: ArrayElement): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value !== "string") return String(value);
  return SPECIAL.test(value) ? `"${value.replace(SPECIALS, "\\$&")}"` : `"${value}"`;
}

/**
 * The Postgres array literal of one column, for `cast($n as <type>[])`: `{"a","b",NULL,3}`. Every
 * text element is quoted, so braces, commas, spaces and the word NULL need nothing more.
 */
export function pgArray(values: readonly ArrayElement[]): string {
  let out = "{";
  for (let i = 0; i < values.length; i++) out += i === 0 ? element(values[i]) : `,${element(values[i])}`;
  return `${out}}`;
}

/**
 * The columns of a batch of rows, each as an array literal, in the order of `columns`: the
 * parameters of `select ... from unnest(cast($1 as t1[]), cast($2 as t2[]), ...) as r(c1, c2, ...)`.
 */
export function pgColumns<Row>(rows: readonly Row[], columns: readonly (keyof Row)[]): string[] {
  return columns.map((column) => pgArray(rows.map((row) => row[column] as ArrayElement)));
}

/**
 * The row source that reads `pgColumns` back, the first column from `$1`:
 * `unnest(cast($1 as text[]), cast($2 as bigint[]), ...) as r(c1, c2, ...)`. Columns are text
 * unless `types` names another type.
 */
export function pgUnnest<Column extends string>(
  columns: readonly Column[],
  types: Partial<Record<Column, string>> = {},
): string {
  const casts = columns.map((c, i) => `cast($${i + 1} as ${types[c] ?? "text"}[])`);
  return `unnest(${casts.join(", ")}) as r(${columns.join(", ")})`;
}
