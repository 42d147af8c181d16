/** SQLSTATE 23505: a row with the same key is stored already. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === "23505";
}
