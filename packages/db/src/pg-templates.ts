import { type ArrayElement, pgColumns } from "./pg-array.ts";

/**
 * Batches whose rows repeat most of their columns, sent as templates: the columns that differ from
 * row to row (ids, times, counts) go one array each as with `pgColumns`, and the columns that
 * repeat (organization, project, principal, model, path...) go once per distinct combination, a
 * template, with one template number per row. A batch of audit records from one busy caller is a
 * handful of templates: Postgres parses a quarter of the array elements it did, and the statement
 * is a quarter of the bytes to build and send.
 */

/** A column value as `pgColumns` takes it, null and undefined alike being NULL. */
const same = (a: unknown, b: unknown) =>
  a === b || ((a === null || a === undefined) && (b === null || b === undefined));

/** An unambiguous text of a row's shared values: each with its type and length, NULL apart. */
function templateKey<Row>(row: Row, shared: readonly (keyof Row)[]): string {
  let key = "";
  for (const column of shared) {
    const v = row[column] as ArrayElement;
    if (v === null || v === undefined) key += "~";
    else {
      const text = String(v);
      key += `${typeof v === "string" ? "s" : typeof v === "number" ? "n" : "b"}${text.length}:${text}`;
    }
  }
  return key;
}

/**
 * The parameters of `pgTemplatedSource(own, shared)`: the `own` columns (one array each), the
 * rows' template numbers (1-based), then the `shared` columns of each template (one array each).
 */
export function pgTemplated<Row>(
  rows: readonly Row[],
  own: readonly (keyof Row)[],
  shared: readonly (keyof Row)[],
): string[] {
  const numbers = new Map<string, number>();
  const templates: Row[] = [];
  let out = "{";
  let last: Row | undefined;
  let lastNumber = 0;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as Row;
    let n = lastNumber;
    // Rows of a batch come in runs of one template: the row before is asked first, without a key.
    if (!last || !shared.every((c) => same(row[c], (last as Row)[c]))) {
      const key = templateKey(row, shared);
      n = numbers.get(key) ?? 0;
      if (n === 0) {
        templates.push(row);
        n = templates.length;
        numbers.set(key, n);
      }
      last = row;
      lastNumber = n;
    }
    out += i === 0 ? String(n) : `,${n}`;
  }
  return [...pgColumns(rows, own), `${out}}`, ...pgColumns(templates, shared)];
}

/**
 * The row source that reads `pgTemplated` back, aliased `r` with the `own` columns then the
 * `shared` ones (text unless `types` names another type), its parameters from `$1`:
 * `(select o.a, o.b, t.c, t.d from unnest($1, $2, $3) as o(a, b, template) join unnest($4, $5)
 * with ordinality as t(c, d, template) on t.template = o.template) as r`.
 *
 * Postgres estimates the rows of this join far below the batch's size (it knows nothing of the
 * template numbers): a statement that plans further joins on it can get nested loops over the
 * whole batch. It suits statements whose other steps are cheap whatever their plan.
 */
export function pgTemplatedSource<Column extends string>(
  own: readonly Column[],
  shared: readonly Column[],
  types: Partial<Record<Column, string>> = {},
): string {
  const cast = (column: Column, n: number) => `cast($${n} as ${types[column] ?? "text"}[])`;
  const numbers = own.length + 1;
  const ownCasts = own.map((c, i) => cast(c, i + 1));
  const sharedCasts = shared.map((c, i) => cast(c, numbers + 1 + i));
  const templates = `unnest(${sharedCasts.join(", ")}) with ordinality as t(${shared.join(", ")}, template)`;
  const columns = [...own.map((c) => `o.${c}`), ...shared.map((c) => `t.${c}`)];
  return `(select ${columns.join(", ")}
    from unnest(${ownCasts.join(", ")}, cast($${numbers} as int[])) as o(${own.join(", ")}, template)
    join ${templates} on t.template = o.template) as r`;
}
