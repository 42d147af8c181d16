// fetch reports every connection failure as the same TypeError("fetch failed"), the reason in its
// cause: this says which, in words.

const REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused (is it running, on that port?)",
  ENOTFOUND: "no such host",
  EAI_AGAIN: "the host name could not be resolved",
  ECONNRESET: "the connection was reset",
  ETIMEDOUT: "the connection timed out",
};

/** Why a request could not reach the installation; undefined when the error is something else. */
export function connectionFailure(error: unknown): string | undefined {
  if (!(error instanceof TypeError) || error.message !== "fetch failed") return undefined;
  const cause = error.cause as (Error & { code?: string }) | undefined;
  return (cause?.code && REASONS[cause.code]) ?? cause?.message ?? "the connection failed";
}
