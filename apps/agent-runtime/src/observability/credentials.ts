// The runtime's own secrets, as values to keep out of what leaves it: traced content, its logs and
// team-chat posts. A tool that read `.env`, a model that repeated a token it was shown, or a
// webhook payload that carries its subscription's signing secret must not hand them to a tracing
// server, a log collector or everyone in a channel.

/** What a secret's value is replaced with. */
export const REDACTED = "[redacted]";

/** The runtime's credentials: variables whose name says key, token, secret or password (public keys aside). */
const CREDENTIAL_NAME = /(^|_)(TOKEN|SECRET|PASSWORD|API_KEY|ACCESS_KEY)(_|$)/;
/** Shorter values are left alone: redacting them would garble ordinary text. */
const MIN_SECRET_LENGTH = 8;

/**
 * How many times a value may show JSON-escaped in what is redacted: a traced model call's input is
 * JSON whose strings carry a tool's output, itself often JSON (a file read as `{"content": …}`);
 * a log line is JSON whose message can quote JSON.
 */
const JSON_ESCAPE_DEPTH = 3;

/** Secret values as redacted: long enough, also as JSON escapes them, longest first (so none is left half hidden). */
export function secretValues(raw: Iterable<string>): string[] {
  const values = [...raw].map((value) => value.trim()).filter((value) => value.length >= MIN_SECRET_LENGTH);
  // As JSON strings carry them too (a string in a string, up to JSON_ESCAPE_DEPTH deep), when a
  // value has characters JSON escapes.
  const escaped: string[] = [];
  for (const value of values) {
    let form = value;
    for (let depth = 0; depth < JSON_ESCAPE_DEPTH; depth++) {
      const next = JSON.stringify(form).slice(1, -1);
      if (next === form) break;
      escaped.push(next);
      form = next;
    }
  }
  return [...new Set([...values, ...escaped])].sort((a, b) => b.length - a.length);
}

/**
 * The password a URL carries in its userinfo (`https://user:password@host`), as written and
 * decoded; none for a URL without one or a value that is not a URL. A user name alone is left:
 * it is most often a name, and redacting it would garble ordinary text.
 */
function urlCredentials(value: string): string[] {
  if (!value.includes("@") || !/^[a-z][a-z0-9+.-]*:\/\//i.test(value.trim())) return [];
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return [];
  }
  const raw = url.password;
  if (!raw) return [];
  try {
    return [raw, decodeURIComponent(raw)];
  } catch {
    return [raw];
  }
}

/**
 * Every credential value of the configuration, longest first: the variables named as credentials,
 * and the password in the userinfo of any URL-valued one (an OTLP endpoint or a
 * gateway behind basic auth, `https://user:password@host`).
 */
export function credentialValues(env: Record<string, unknown>): string[] {
  const values: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== "string") continue;
    if (CREDENTIAL_NAME.test(name)) values.push(value);
    values.push(...urlCredentials(value));
  }
  return secretValues(values);
}

/**
 * Every value the runtime redacts: its credentials (fixed at start) and the secrets of sources
 * that change while it runs (the webhook subscriptions' verification secrets). `values` is read on
 * every redaction; the list is rebuilt only when a source answers a different list than before.
 */
export class RuntimeSecrets {
  readonly #credentials: readonly string[];
  readonly #sources: Array<() => readonly string[]> = [];
  #seen: Array<readonly string[]> = [];
  #values: readonly string[];

  constructor(env: Record<string, unknown>) {
    this.#credentials = credentialValues(env);
    this.#values = this.#credentials;
  }

  /** A source of secrets, asked on every redaction: it answers the same array while nothing changed. */
  add(source: () => readonly string[]): void {
    this.#sources.push(source);
  }

  readonly values = (): readonly string[] => {
    const lists = this.#sources.map((source) => source());
    if (lists.length === this.#seen.length && lists.every((list, i) => list === this.#seen[i])) return this.#values;
    this.#seen = lists;
    const merged = new Set([...this.#credentials, ...secretValues(lists.flat())]);
    this.#values = [...merged].sort((a, b) => b.length - a.length);
    return this.#values;
  };
}

/** `text` with every one of `secrets` replaced by REDACTED. */
export function redactCredentials(text: string, secrets: readonly string[]): string {
  let clean = text;
  for (const secret of secrets) if (clean.includes(secret)) clean = clean.split(secret).join(REDACTED);
  return clean;
}
