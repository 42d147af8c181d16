/**
 * Credentials inside URLs (`https://user:pass@host/`, `?api_key=…`, `&X-Amz-Signature=…`) kept out
 * of answers, audit records, logs and error messages. What the URL carries is replaced by
 * `URL_CREDENTIAL_MARKER`, a plain word that needs no percent-encoding, so a redacted URL is still
 * a valid URL that reads as what it is. The stored URL stays whole; only what is shown changes.
 */
export const URL_CREDENTIAL_MARKER = "REDACTED";

/** Query parameter names (lower case, without `-`, `_`, `.`) that are credentials themselves. */
const CREDENTIAL_NAMES = new Set([
  "auth",
  "code",
  "key",
  "pass",
  "pwd",
  "sig",
  "sas",
  "jwt",
  "session",
  "sessionid",
  "bearer",
]);
/** Words that make any name containing them a credential (`access_token`, `client_secret`, `X-Amz-Signature`). */
const CREDENTIAL_WORDS = [
  "token",
  "secret",
  "password",
  "passwd",
  "apikey",
  "signature",
  "credential",
  "authorization",
  "privatekey",
];
/** Endings that make a name a credential (`subscription-key`, `x-auth`, `urlsig`). */
const CREDENTIAL_ENDINGS = ["key", "auth", "sig", "pwd"];

/**
 * Whether a query parameter name (already decoded) names a credential: case-insensitive, with
 * `-`, `_` and `.` ignored, so `api_key`, `API-Key` and `apikey` are one name. Errs on the side of
 * hiding (`sortKey` is hidden too): a hidden harmless value costs less than a shown secret.
 */
export function isCredentialParamName(name: string): boolean {
  const n = name.toLowerCase().replace(/[-_.\s]/g, "");
  if (!n) return false;
  return (
    CREDENTIAL_NAMES.has(n) ||
    CREDENTIAL_WORDS.some((w) => n.includes(w)) ||
    CREDENTIAL_ENDINGS.some((e) => n.endsWith(e))
  );
}

function decodeComponent(raw: string): string {
  try {
    return decodeURIComponent(raw.replaceAll("+", " "));
  } catch {
    return raw;
  }
}

/**
 * A query string (without `?`) or a `#a=b` fragment with the values of credential parameters
 * replaced, every other byte as it was (no re-encoding of parameters that are not touched).
 */
function redactParams(raw: string, found?: string[]): string {
  return raw
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return pair;
      const value = pair.slice(eq + 1);
      if (!value || !isCredentialParamName(decodeComponent(pair.slice(0, eq)))) return pair;
      found?.push(value, decodeComponent(value));
      return `${pair.slice(0, eq + 1)}${URL_CREDENTIAL_MARKER}`;
    })
    .join("&");
}

function parse(value: string): URL | undefined {
  // Only absolute URLs with an authority: `mailto:` and other opaque forms carry no credentials here.
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return undefined;
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/**
 * Redacts one URL and collects the values it hid (raw and decoded), or answers undefined when
 * nothing needed hiding (the caller then keeps the original string, byte for byte).
 */
function redact(value: string): { url: string; secrets: string[] } | undefined {
  const url = parse(value);
  if (!url) return undefined;
  const secrets: string[] = [];
  if (url.password) {
    secrets.push(url.password, decodeComponent(url.password));
    url.password = URL_CREDENTIAL_MARKER;
  } else if (url.username) {
    // A user name without a password is how tokens ride in URLs (`https://<token>@host/`).
    secrets.push(url.username, decodeComponent(url.username));
    url.username = URL_CREDENTIAL_MARKER;
  }
  const search = url.search.slice(1);
  if (search) {
    const redacted = redactParams(search, secrets);
    if (redacted !== search) url.search = redacted;
  }
  const hash = url.hash.slice(1);
  if (hash.includes("=")) {
    const redacted = redactParams(hash, secrets);
    if (redacted !== hash) url.hash = redacted;
  }
  return secrets.length > 0 ? { url: url.href, secrets } : undefined;
}

/**
 * The URL with its user-info password (or a lone user name) and the values of credential-like
 * query and fragment parameters replaced by `URL_CREDENTIAL_MARKER`; a URL with nothing to hide,
 * and any string that is not an absolute URL, is returned unchanged.
 */
export function redactUrlCredentials(value: string): string {
  return redact(value)?.url ?? value;
}

/** The credential values a URL carries (as written and decoded), for scrubbing text that may repeat them. */
export function urlCredentialValues(value: string): string[] {
  return [...new Set(redact(value)?.secrets ?? [])];
}

/**
 * Whether the URL carries the marker where a credential goes: a redacted URL sent back as if it
 * were the real one.
 */
export function carriesCredentialMarker(value: string): boolean {
  const url = parse(value);
  if (!url) return false;
  if (url.password === URL_CREDENTIAL_MARKER || url.username === URL_CREDENTIAL_MARKER) return true;
  const marked = (raw: string) =>
    raw.split("&").some((pair) => {
      const eq = pair.indexOf("=");
      return (
        eq >= 0 &&
        pair.slice(eq + 1) === URL_CREDENTIAL_MARKER &&
        isCredentialParamName(decodeComponent(pair.slice(0, eq)))
      );
    });
  return marked(url.search.slice(1)) || marked(url.hash.slice(1));
}

/** Values this short are not hidden by value: replacing every `42` in a message would garble it. */
const MIN_SCRUBBED_LENGTH = 6;
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;
const PARAM_IN_TEXT = /([?&#;]|^|[\s"'(])([A-Za-z0-9_.%-]+)=([^&#\s"'<>`)]+)/g;

/**
 * Text (an error message, a log line) with credentials hidden: every absolute URL in it redacted,
 * every `name=value` pair whose name is a credential's, and every occurrence of `known` values
 * (the credentials of the URLs the text may be about, from `urlCredentialValues`) of 6 characters
 * or more.
 */
export function redactCredentialsInText(text: string, known: readonly string[] = []): string {
  let out = text;
  for (const secret of [...known].sort((a, b) => b.length - a.length)) {
    if (secret.length >= MIN_SCRUBBED_LENGTH) out = out.replaceAll(secret, URL_CREDENTIAL_MARKER);
  }
  out = out.replace(URL_IN_TEXT, (match) => {
    // Punctuation that ends a sentence or closes a bracket around the URL is not part of it.
    const url = match.replace(/[.,;:!?)\]]+$/, "");
    return `${redactUrlCredentials(url)}${match.slice(url.length)}`;
  });
  return out.replace(PARAM_IN_TEXT, (all, before: string, name: string, value: string) =>
    value !== URL_CREDENTIAL_MARKER && isCredentialParamName(decodeComponent(name))
      ? `${before}${name}=${URL_CREDENTIAL_MARKER}`
      : all,
  );
}
