/** The HTTP status of a client-node API failure (undefined for a connection failure). */
export function statusCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown })?.code;
  return typeof code === "number" ? code : undefined;
}

/**
 * What the API server said, for logs, readiness and `lastError`: the `Status` message of an HTTP
 * failure (a 403 names the verb and resource RBAC refused), else the connection error.
 */
export function apiMessage(err: unknown): string {
  const e = err as { code?: number; body?: unknown; message?: string; cause?: { message?: string; code?: string } };
  if (typeof e?.code === "number") {
    let body = e.body;
    if (typeof body === "string") {
      try {
        body = JSON.parse(body);
      } catch {
        // Not JSON: use it as it is.
      }
    }
    const message = (body as { message?: string })?.message ?? (typeof body === "string" ? body : undefined);
    return `${e.code}${message ? ` ${message}` : ""}`;
  }
  const cause = e?.cause?.code ?? e?.cause?.message;
  return `${e?.message ?? String(err)}${cause ? ` (${cause})` : ""}`;
}
