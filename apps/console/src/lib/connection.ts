/**
 * A lost connection: the platform did not answer at all (the browser's fetch failed, a code chunk
 * could not be loaded) or a proxy in front of it answered that it is gone. Pages show a retry
 * banner for these instead of an error about the request.
 */
const CHUNK_FAILURE =
  /Failed to fetch dynamically imported module|Importing a module script failed|error loading dynamically imported module/i;

export function isConnectionLost(err: unknown): boolean {
  if (err instanceof TypeError) return true;
  if (err instanceof Error && CHUNK_FAILURE.test(err.message)) return true;
  const status = (err as { status?: unknown } | null)?.status;
  const problem = (err as { problem?: { type?: unknown } } | null)?.problem;
  // A gateway's 502/504 without a problem document of ours: the platform behind it is unreachable.
  return (status === 502 || status === 504) && typeof problem?.type !== "string";
}
