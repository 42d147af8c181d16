/** An HTTP header name: a token of RFC 9110. */
export const HTTP_HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Headers the platform's outbound client owns: framing, the connection and the target host. A
 * tenant's header or credential setting one would aim a request at another virtual host of an
 * allowed address, or break the request's framing.
 */
export const RESERVED_HEADER_NAMES: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "proxy-connection",
  "upgrade",
  "te",
  "trailer",
  "expect",
]);

/** Why a header name cannot be set by a tenant, or undefined when it can. */
export function headerNameProblem(name: string): string | undefined {
  if (!HTTP_HEADER_NAME.test(name)) return "not a header name: letters, digits and !#$%&'*+.^_`|~- only";
  if (RESERVED_HEADER_NAMES.has(name.toLowerCase())) return `${name.toLowerCase()} is set by the platform`;
  return undefined;
}

/**
 * Why a header value cannot be sent, or undefined when it can. The message never repeats the value,
 * which may be a secret: control characters (line breaks, NUL) would end the header or be refused
 * by the HTTP client, whose error names the value.
 */
export function headerValueProblem(value: string): string | undefined {
  if (/[^\P{Cc}\t]/u.test(value)) return "must not contain control characters (line breaks included)";
  return undefined;
}
