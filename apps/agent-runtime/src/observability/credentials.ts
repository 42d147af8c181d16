// The runtime's own credentials, as values to keep out of what leaves it: traced content and
// team-chat posts. A tool that read `.env`, or a model that repeated a token it was shown, must
// not hand the keys to a tracing server or to everyone in a channel.

/** What a credential's value is replaced with. */
export const REDACTED = "[redacted]";

/** The runtime's credentials: variables whose name says key, token, secret or password (public keys aside). */
const CREDENTIAL_NAME = /(^|_)(TOKEN|SECRET|PASSWORD|API_KEY|ACCESS_KEY)(_|$)/;
/** Shorter values are left alone: redacting them would garble ordinary text. */
const MIN_SECRET_LENGTH = 8;

/** Every credential value of the configuration, longest first (so none is left half hidden). */
export function credentialValues(env: Record<string, unknown>): string[] {
  const values = Object.entries(env)
    .filter(([name, value]) => CREDENTIAL_NAME.test(name) && typeof value === "string")
    .map(([, value]) => (value as string).trim())
    .filter((value) => value.length >= MIN_SECRET_LENGTH);
  // As JSON strings carry them too, when a value has characters JSON escapes.
  const escaped = values.map((v) => JSON.stringify(v).slice(1, -1));
  return [...new Set([...values, ...escaped])].sort((a, b) => b.length - a.length);
}

/** `text` with every one of `secrets` replaced by REDACTED. */
export function redactCredentials(text: string, secrets: readonly string[]): string {
  let clean = text;
  for (const secret of secrets) if (clean.includes(secret)) clean = clean.split(secret).join(REDACTED);
  return clean;
}
