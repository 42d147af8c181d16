import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { ProblemError } from "@agentplane/sdk";
import type { Command } from "commander";
import { assertTokenTransport, clientFor, type Io, openSession, requireToken, resolveUrl } from "./context.ts";
import { deviceLogin } from "./device-login.ts";
import { CliError, EXIT } from "./exit-codes.ts";
import { connectionFailure } from "./network.ts";
import { addOutputOptions, type CommandDeps } from "./operations.ts";
import { type OutputFlags, printResult } from "./output.ts";
import { printableLine } from "./printable.ts";
import { readHidden } from "./prompt.ts";
import { hostKey, normalizeUrl } from "./store.ts";

const storedIn = (where: "keyring" | "file", store: { dir: string }) =>
  where === "keyring" ? "OS keyring" : `file ${store.dir}/hosts.json`;

const mask = (token: string) => `${token.slice(0, 8)}${"*".repeat(Math.max(0, Math.min(24, token.length - 8)))}`;

async function whoami(
  io: Io,
  url: string,
  token: string,
): Promise<{ principal: string; detail: Record<string, unknown> }> {
  const sdk = clientFor(io, url, token);
  let me: Record<string, unknown>;
  try {
    me = (await sdk.raw("GET", "/v1/auth/me")) as Record<string, unknown>;
  } catch (error) {
    // A scoped token (`llm:invoke` for model calls) may not read the account, but a 403 says the
    // installation took it: a 401 would have come first. It is named by what it is restricted to.
    if (!(error instanceof ProblemError) || error.status !== 403) throw error;
    const scopes = /restricted to ([^;]+)/.exec(error.detail ?? "")?.[1];
    return { principal: scopes ? `a token restricted to ${scopes}` : "a restricted token", detail: {} };
  }
  const who = String(me.email ?? me.displayName ?? me.id ?? "unknown");
  // An API token's display name is the token's ("agentplane CLI on build-7"): name the person it
  // acts for, as a member of its first organization, and the token beside them.
  const orgs = (me.organizations ?? []) as { id: string }[];
  if (me.type === "api_token" && typeof me.userId === "string" && orgs[0]) {
    try {
      const member = (await sdk.raw("GET", `/v1/orgs/${orgs[0].id}/members/${me.userId}`)) as Record<string, unknown>;
      const person = member.email ?? member.displayName;
      if (typeof person === "string" && person) {
        return { principal: printableLine(`${person} (token "${who}")`), detail: me };
      }
    } catch {
      // A token that may not read members still logs in: it is named by itself.
    }
  }
  return { principal: printableLine(who), detail: me };
}

export function addAuthCommands(root: Command, deps: CommandDeps): void {
  const { io, store } = deps;
  const auth = root.commands.find((c) => c.name() === "auth") ?? root.command("auth");
  auth.description("Log in, show the identity, print or forget the token");

  auth
    .command("login")
    .description("Log in to an installation (device flow, or --with-token from stdin)")
    .option("--with-token", "read an API token from stdin instead of the device flow")
    .option("--no-browser", "do not open a browser (the address is printed either way)")
    .action(async (_opts, command: Command) => {
      const opts = command.optsWithGlobals() as { url?: string; withToken?: boolean; browser?: boolean };
      const url = opts.url ? normalizeUrl(opts.url) : resolveUrl(io, store, undefined);
      // A login hands a token over (the device flow) or sends one: either way, not in the clear.
      assertTokenTransport(io, url);
      if (opts.withToken) {
        let token: string;
        if (io.stdin.isTTY) {
          // Not echoed: a token on the screen stays in the scrollback.
          io.stderr.write("Paste a token (it is not shown), then press Enter: ");
          token = (await readHidden(io)).trim();
        } else {
          token = readFileSync(0, "utf8").trim();
        }
        if (!token) throw new CliError("no token on stdin", EXIT.auth);
        const me = await whoami(io, url, token);
        const where = await store.saveCredentials({
          url,
          token,
          principal: me.principal,
          via: "token",
          savedAt: new Date().toISOString(),
        });
        io.stderr.write(`Logged in to ${hostKey(url)} as ${me.principal} (token in the ${storedIn(where, store)})\n`);
        return;
      }
      const result = await deviceLogin(io, url, {
        browser: opts.browser !== false,
        clientName: `agentplane CLI on ${hostname()}`,
      });
      const me = await whoami(io, url, result.token);
      const where = await store.saveCredentials({
        url,
        token: result.token,
        ...(result.tokenId ? { tokenId: result.tokenId } : {}),
        principal: me.principal,
        via: result.via,
        savedAt: new Date().toISOString(),
      });
      io.stderr.write(`Logged in to ${hostKey(url)} as ${me.principal} (token in the ${storedIn(where, store)})\n`);
    });

  addOutputOptions(
    auth
      .command("status")
      .description("Show the installations logged in to and who the token acts for")
      .action(async (_opts, command: Command) => {
        const opts = command.optsWithGlobals() as { url?: string } & OutputFlags;
        const urls =
          opts.url || io.env.AGENTPLANE_URL
            ? [resolveUrl(io, store, opts.url)]
            : Object.values(store.hosts()).map((h) => h.url);
        if (urls.length === 0 && !io.env.AGENTPLANE_TOKEN)
          throw new CliError("not logged in to any installation: run `agentplane auth login`", EXIT.auth);
        const rows: Record<string, unknown>[] = [];
        // Exit 4 when a token is missing or refused; 1 when an installation only could not be reached.
        let failed = false;
        let unreachable = false;
        // AGENTPLANE_TOKEN is the chosen installation's: the others are asked with their own tokens.
        let chosen: string | undefined;
        try {
          chosen = resolveUrl(io, store, opts.url);
        } catch {}
        const storedOnly: Io = { ...io, env: { ...io.env, AGENTPLANE_TOKEN: undefined } };
        for (const url of urls) {
          const session = openSession(url === chosen ? io : storedOnly, store, url);
          const row: Record<string, unknown> = { host: hostKey(url), url, tokenSource: session.tokenSource };
          if (session.token) {
            row.token = mask(session.token);
            try {
              row.principal = (await whoami(io, url, session.token)).principal;
              row.status = "ok";
            } catch (error) {
              if (error instanceof ProblemError) {
                failed = true;
                row.status = `refused: ${error.title}`;
              } else {
                unreachable = true;
                row.status = `unreachable: ${connectionFailure(error) ?? (error as Error).message}`;
              }
            }
          } else {
            failed = true;
            row.status = "no token";
          }
          rows.push(row);
        }
        await printResult(io, rows, opts, {
          fields: ["host", "principal", "status", "tokenSource", "token", "url"],
          list: true,
        });
        if (failed) process.exitCode = EXIT.auth;
        else if (unreachable) process.exitCode = EXIT.error;
      }),
  );

  auth
    .command("token")
    .description(
      'Print the token of the installation (for scripts: `curl -H "authorization: Bearer $(agentplane auth token)"`)',
    )
    .action((_opts, command: Command) => {
      const opts = command.optsWithGlobals() as { url?: string };
      io.stdout.write(`${requireToken(openSession(io, store, opts.url))}\n`);
    });

  auth
    .command("logout")
    .description("Forget the stored token; one that login minted is revoked on the installation")
    .action(async (_opts, command: Command) => {
      const opts = command.optsWithGlobals() as { url?: string };
      const url = resolveUrl(io, store, opts.url);
      const stored = store.credentials(url);
      if (!stored) throw new CliError(`not logged in to ${hostKey(url)}`, EXIT.auth);
      let refused: ProblemError | undefined;
      if (stored.tokenId) {
        const sdk = clientFor(io, url, stored.token);
        try {
          await sdk.request("revokeApiToken", { path: { tokenId: stored.tokenId } });
        } catch (error) {
          if (!(error instanceof ProblemError)) throw error;
          // Already revoked or expired: forgetting it is all that is left to do. Refused (a role
          // that may not manage tokens): forget it all the same, but say it still works.
          if (error.status === 403) refused = error;
          else if (![401, 404].includes(error.status)) throw error;
        }
      }
      await store.removeCredentials(url);
      if (refused) {
        io.stderr.write(
          `Logged out of ${hostKey(url)}, but the token ${printableLine(String(stored.tokenId))} could not be revoked (${printableLine(refused.detail ?? refused.title)}): revoke it in the console or with a token allowed to\n`,
        );
        process.exitCode = EXIT.error;
        return;
      }
      io.stderr.write(`Logged out of ${hostKey(url)}${stored.tokenId ? " (token revoked)" : ""}\n`);
    });
}
