import { type AgentplaneClient, createAgentplaneClient, RequestTimeoutError } from "@agentplane/sdk";
import { CliError, EXIT } from "./exit-codes.ts";
import { hostKey, normalizeUrl, type Store } from "./store.ts";
import { VERSION } from "./version.ts";

export { VERSION } from "./version.ts";

/** What every command reads from its surroundings: environment, streams, the store. */
export interface Io {
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  /** `--timeout` as given on the command line (set before the command's action runs). */
  timeout?: string;
}

export function processIo(): Io {
  return { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
}

export interface Session {
  url: string;
  token: string | undefined;
  tokenSource: "AGENTPLANE_TOKEN" | "store" | "none";
  sdk: AgentplaneClient;
}

/** The installation: `--url` > `AGENTPLANE_URL` > the current one in the store > the only one stored. */
export function resolveUrl(io: Io, store: Store, flag: string | undefined): string {
  const chosen = flag ?? io.env.AGENTPLANE_URL ?? store.settings().current;
  if (chosen) return normalizeUrl(chosen);
  const stored = Object.values(store.hosts());
  if (stored.length === 1) return stored[0]!.url;
  throw new CliError(
    stored.length === 0
      ? "no installation chosen: run `agentplane auth login --url <address>` or set AGENTPLANE_URL"
      : `several installations are stored (${stored.map((h) => hostKey(h.url)).join(", ")}): pass --url or set AGENTPLANE_URL`,
    EXIT.auth,
  );
}

/** How long a request may take by default, in seconds: an API call, and a pass-through's upstream. */
export const DEFAULT_TIMEOUT_S = 60;
export const PASSTHROUGH_TIMEOUT_S = 600;

/**
 * The request timeout in milliseconds, 0 for none: `--timeout` > `AGENTPLANE_TIMEOUT` > the
 * default (a model call or a proxied API waits as long as the platform's proxy does, 10 minutes).
 */
export function requestTimeoutMs(io: Io, passthrough = false): number {
  const given = io.timeout ?? io.env.AGENTPLANE_TIMEOUT;
  if (given === undefined || given === "") return (passthrough ? PASSTHROUGH_TIMEOUT_S : DEFAULT_TIMEOUT_S) * 1000;
  const seconds = Number(given);
  if (!/^\d+(\.\d+)?$/.test(given.trim()) || !Number.isFinite(seconds)) {
    const from = io.timeout !== undefined ? "--timeout" : "AGENTPLANE_TIMEOUT";
    throw new CliError(`${from} takes seconds (0 waits as long as it takes), not ${JSON.stringify(given)}`);
  }
  return Math.round(seconds * 1000);
}

/** This machine: localhost (and *.localhost), 127.0.0.0/8, ::1. */
function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === "localhost" || host.endsWith(".localhost") || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Refuses to send a token, or to be handed one (a login), over plain http to another machine:
 * anyone on the way reads it there. `AGENTPLANE_INSECURE_HTTP=1` allows it for a network the
 * person trusts (a lab, a cluster's inside), as docker's insecure registries and helm's
 * --plain-http are opted into; this machine never needs it.
 */
export function assertTokenTransport(io: Io, url: string): void {
  const { protocol, hostname, host } = new URL(url);
  if (protocol !== "http:" || isLoopback(hostname) || io.env.AGENTPLANE_INSECURE_HTTP === "1") return;
  throw new CliError(
    `refusing to send a token to ${host} over plain http, where anyone on the way can read it: use https://${host}, or set AGENTPLANE_INSECURE_HTTP=1 on a network you trust`,
  );
}

/**
 * fetch, each attempt ended at the deadline by a timer of its own as well. The client's deadline
 * reaches fetch through a chain of signals following one another (AbortSignal.any, copies of the
 * Request): a garbage collection while the answer is awaited can drop a link that only a weak
 * reference held, and the request then waits past --timeout for an answer that never comes. This
 * controller is held by its timer (unref'd: it keeps no finished command waiting) until it fires,
 * which also ends an answer still being read then.
 */
function fetchWithDeadline(ms: number): (request: Request) => Promise<Response> {
  return (request) => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException("the deadline passed", "TimeoutError")), ms);
    timer.unref();
    const { signal } = request;
    if (signal.aborted) controller.abort(signal.reason);
    else signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
    return fetch(request, { signal: controller.signal });
  };
}

/** The one way the CLI makes a client: its user agent, its timeout, and a token if there is one. */
export function clientFor(
  io: Io,
  url: string,
  token: string | undefined,
  options: { passthrough?: boolean } = {},
): AgentplaneClient {
  const timeoutMs = requestTimeoutMs(io, options.passthrough);
  return createAgentplaneClient({
    baseUrl: url,
    ...(timeoutMs > 0 ? { fetch: fetchWithDeadline(timeoutMs) } : {}),
    // Checked when a request would carry it: `auth token` prints it wherever the installation is.
    ...(token
      ? {
          token: () => {
            assertTokenTransport(io, url);
            return token;
          },
        }
      : {}),
    timeoutMs,
    headers: { "user-agent": `agentplane-cli/${VERSION} node/${process.versions.node}` },
  });
}

/** A timeout as a line that names the installation and the flag that waits longer; else undefined. */
export function timeoutFailure(error: unknown, url: string): CliError | undefined {
  if (!(error instanceof RequestTimeoutError)) return undefined;
  return new CliError(
    `${url} did not answer within ${error.timeoutMs / 1000} s: --timeout <seconds> waits longer (0: as long as it takes)`,
  );
}

/** A client for the chosen installation; `AGENTPLANE_TOKEN` beats the stored credentials. */
export function openSession(
  io: Io,
  store: Store,
  urlFlag: string | undefined,
  options: { passthrough?: boolean } = {},
): Session {
  const url = resolveUrl(io, store, urlFlag);
  const envToken = io.env.AGENTPLANE_TOKEN;
  const stored = envToken ? undefined : store.credentials(url);
  const token = envToken || stored?.token;
  const sdk = clientFor(io, url, token, options);
  return { url, token, tokenSource: envToken ? "AGENTPLANE_TOKEN" : stored ? "store" : "none", sdk };
}

/** Fails with exit 4 and the login hint when no token is at hand. */
export function requireToken(session: Session): string {
  if (!session.token) {
    throw new CliError(
      `not logged in to ${hostKey(session.url)}: run \`agentplane auth login\` or set AGENTPLANE_TOKEN`,
      EXIT.auth,
    );
  }
  return session.token;
}
