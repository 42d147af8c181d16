/** Kysely's `sql` tag for scripts outside this package (the benchmark) that seed and inspect the audit schema. */
export { sql } from "kysely";
