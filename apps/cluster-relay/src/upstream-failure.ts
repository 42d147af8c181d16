/** How long the relay waits for a connection (TCP and TLS) to the API server before it gives up. */
export const CONNECT_TIMEOUT_MS = 10_000;

/** The connection to the API server was not made in time (raised by the relay itself). */
export class ConnectTimeoutError extends Error {
  readonly code = "ETIMEDOUT";
  constructor(server: string) {
    super(`no connection to ${server} within ${CONNECT_TIMEOUT_MS} ms`);
    this.name = "ConnectTimeoutError";
  }
}

/**
 * Why the API server could not be asked, in the words an operator acts on: the connection refused,
 * the name not resolving, TLS failing (certificate, protocol), a timeout, or the kubeconfig itself.
 */
export function describeUpstreamFailure(error: unknown, server: string): string {
  const e = error as { code?: string; message?: string };
  const code = e?.code ?? "";
  const message = e?.message ?? String(error);
  if (error instanceof ConnectTimeoutError || code === "ETIMEDOUT") return `timeout: ${message}`;
  if (code === "ECONNREFUSED") return `connection refused by ${server}`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `DNS: the host of ${server} does not resolve (${code})`;
  if (code === "ECONNRESET" || code === "EPIPE") return `connection to ${server} reset before an answer`;
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH") return `no route to ${server}`;
  if (
    code.startsWith("ERR_TLS_") ||
    code.startsWith("ERR_SSL_") ||
    code === "EPROTO" ||
    /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)
  ) {
    return `TLS with ${server} failed (${code}): ${message}`;
  }
  return `${server}: ${message}`;
}
