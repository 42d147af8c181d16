// fetch reports every connection failure as the same TypeError("fetch failed"), the reason in its
// cause: this says which, in words.

const REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused (is it running, on that port?)",
  ENOTFOUND: "no such host",
  EAI_AGAIN: "the host name could not be resolved",
  ECONNRESET: "the connection was reset",
  ETIMEDOUT: "the connection timed out",
  ERR_SSL_WRONG_VERSION_NUMBER: "it answered plain HTTP to a TLS handshake (use http://)",
  ERR_SSL_PACKET_LENGTH_TOO_LONG: "it answered plain HTTP to a TLS handshake (use http://)",
};
const UNTRUSTED = "its TLS certificate is not trusted here (NODE_EXTRA_CA_CERTS=<file> adds a CA)";
const CERTIFICATE_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
]);

/** Why a request could not reach the installation; undefined when the error is something else. */
export function connectionFailure(error: unknown): string | undefined {
  if (!(error instanceof TypeError) || error.message !== "fetch failed") return undefined;
  const cause = error.cause as (Error & { code?: string }) | undefined;
  const code = cause?.code ?? "";
  if (CERTIFICATE_CODES.has(code)) return `${UNTRUSTED}: ${code}`;
  return REASONS[code] ?? cause?.message ?? "the connection failed";
}
