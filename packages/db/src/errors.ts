/**
 * SQLSTATE 23505: a row with the same key is stored already. The code is on the error itself
 * (postgres.js, PGlite) or on its cause where a layer wrapped it.
 */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null | undefined;
  return e?.code === "23505" || e?.cause?.code === "23505";
}
