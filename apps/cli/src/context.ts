import { type AgentplaneClient, createAgentplaneClient } from "@agentplane/sdk";
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

/** A client for the chosen installation; `AGENTPLANE_TOKEN` beats the stored credentials. */
export function openSession(io: Io, store: Store, urlFlag: string | undefined): Session {
  const url = resolveUrl(io, store, urlFlag);
  const envToken = io.env.AGENTPLANE_TOKEN;
  const stored = envToken ? undefined : store.credentials(url);
  const token = envToken || stored?.token;
  const sdk = createAgentplaneClient({
    baseUrl: url,
    ...(token ? { token } : {}),
    headers: { "user-agent": `agentplane-cli/${VERSION} node/${process.versions.node}` },
  });
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
