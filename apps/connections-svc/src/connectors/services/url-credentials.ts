import {
  carriesCredentialMarker,
  redactCredentialsInText,
  URL_CREDENTIAL_MARKER,
  urlCredentialValues,
} from "@agentplane/contracts";
import { badRequest, ProblemError } from "@agentplane/problem-details";
import { FetchRefusedError } from "@agentplane/service-kit/outbound";

/** The credentials the URLs of a connector (or of a source being discovered) carry. */
export function credentialsOfUrls(...urls: Array<string | null | undefined>): string[] {
  return urls.flatMap((url) => (url ? urlCredentialValues(url) : []));
}

function scrubExtensions(extensions: Record<string, unknown>, known: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(extensions).map(([k, v]) => [k, typeof v === "string" ? redactCredentialsInText(v, known) : v]),
  );
}

/**
 * The error with the connector URLs' credentials hidden from everything that is answered or logged
 * of it: a problem's detail, field errors and extensions, another error's message and stack. The
 * cause is left off (a logger prints causes, and the upstream's words may repeat the URL).
 */
export function withoutUrlCredentials(error: unknown, known: readonly string[]): unknown {
  const scrub = (text: string) => redactCredentialsInText(text, known);
  if (error instanceof ProblemError) {
    return new ProblemError(error.slug, {
      status: error.status,
      title: error.title,
      ...(error.detail !== undefined ? { detail: scrub(error.detail) } : {}),
      ...(error.errors ? { errors: error.errors.map((e) => ({ ...e, message: scrub(e.message) })) } : {}),
      headers: error.headers,
      extensions: scrubExtensions(error.extensions, known),
    });
  }
  if (error instanceof FetchRefusedError) return new FetchRefusedError(error.reason, scrub(error.message));
  if (error instanceof Error) {
    const clean = new Error(scrub(error.message));
    clean.name = error.name;
    if (error.stack) clean.stack = scrub(error.stack);
    return clean;
  }
  return error;
}

/**
 * A URL sent with the marker in place of a credential is a redacted URL sent back: storing it would
 * replace the secret with the word. Refused, naming the field.
 */
export function refuseRedactedUrl(url: string | undefined, pointer: string): void {
  if (url && carriesCredentialMarker(url)) {
    throw badRequest(`The URL carries ${URL_CREDENTIAL_MARKER} where a credential goes`, [
      {
        pointer,
        message: `${URL_CREDENTIAL_MARKER} stands for a credential that is never returned; send the real value, or better a credentialId or headers`,
      },
    ]);
  }
}
