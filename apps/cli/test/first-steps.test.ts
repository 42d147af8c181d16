import { createAgentplaneClient } from "@agentplane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBwrap } from "../../platform/test/sandbox-harness.ts";
import { runCli, runInProcess, startTestPlatform, type TestPlatform, tempConfigDir } from "./harness.ts";

const bwrap = requireBwrap();

describe("a new user's first commands: a command line in a sandbox, models in the default project", () => {
  let p: TestPlatform;
  const config = tempConfigDir();
  let env: Record<string, string>;
  let projectId = "";
  let orgId = "";

  beforeAll(async () => {
    p = await startTestPlatform();
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    orgId = (await sdk.request("createOrganization", { body: { name: "Acme" } })).id;
    projectId = (await sdk.request("createProject", { path: { orgId }, body: { name: "first" } })).id;
    // A second project: the caller's only one can no longer be guessed.
    await sdk.request("createProject", { path: { orgId }, body: { name: "second" } });
    env = { AGENTPLANE_CONFIG_DIR: config.dir, AGENTPLANE_URL: p.url, AGENTPLANE_TOKEN: p.ownerToken };
    expect((await runInProcess(["config", "set", "org", orgId], env)).code).toBe(0);
    expect((await runInProcess(["config", "set", "project", projectId], env)).code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    config.remove();
  });

  it.skipIf(!bwrap.available)(
    `runs --command 'ls /' as a command line, not a program named so${bwrap.reason}`,
    async () => {
      const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
      const box = await sdk.request("createSandbox", { path: { projectId }, body: { name: "first", start: true } });
      const run = (command: string) =>
        runInProcess(
          ["sandboxes", "run", "--sandbox-id", box.id, "--command", command, "--json", "exitCode,stdout"],
          env,
        );
      const line = await run("echo one two | wc -w");
      expect(line.stderr).toBe("");
      expect(JSON.parse(line.stdout)).toEqual({ exitCode: 0, stdout: "2\n" });
      // A program whose name is JSON (`true`, a number) is still a command line; JSON arrays stay argv.
      expect(JSON.parse((await run("true")).stdout)).toEqual({ exitCode: 0, stdout: "" });
      expect(JSON.parse((await run('["echo","a b"]')).stdout)).toEqual({ exitCode: 0, stdout: "a b\n" });
      const help = await runInProcess(["sandboxes", "run", "--help"], env);
      expect(help.stdout).toMatch(/--command <line\|json>/);
    },
  );

  it("says how to start a created sandbox before a command can run in it", async () => {
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    const box = await sdk.request("createSandbox", { path: { projectId }, body: { name: "not started" } });
    const ran = await runInProcess(["sandboxes", "run", "--sandbox-id", box.id, "--command", "true"], env);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`Sandbox ${box.id} is pending, not running: start it first (request id `);
    expect(ran.stderr).not.toContain("/v1/");
  });

  it("says where a remote command's own flags go when they come before --", async () => {
    const ran = await runInProcess(["sandboxes", "exec", "sbx_any", "ls", "-la"], env);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toBe(
      "error: unknown option '-la'\n  (the remote command goes after --: agentplane sandboxes exec <sandbox> -- ls -la)\n",
    );
    // Other commands' unknown flags are only that.
    expect((await runInProcess(["orgs", "list", "-la"], env)).stderr).toBe("error: unknown option '-la'\n");
  });

  it("says that connectors tools call --name is the tool's name", async () => {
    const help = await runInProcess(["connectors", "tools", "call", "--help"], env);
    expect(help.stdout).toMatch(/--name <value> +The tool's name/);
    expect(help.stdout).not.toContain("The name people see");
  });

  it("sends llm request and llm providers list to the saved default project", async () => {
    // No provider credential here: the proxy's own 503 names the provider, so the project was chosen.
    const called = await runInProcess(["llm", "request", "cloud-b/family-1/anthropic/v1/messages", "-f", "a=1"], env);
    expect(called.stderr).not.toContain("several projects");
    expect(called.stderr).toContain("No credential for cloud-b");
    const providers = await runInProcess(["llm", "providers", "list", "--json"], env);
    expect(providers.stderr).toBe("");
    expect(providers.code).toBe(0);
    // AGENTPLANE_PROJECT beats the saved default, as for --project everywhere.
    const other = await runInProcess(["llm", "providers", "list"], { ...env, AGENTPLANE_PROJECT: "prj_unknown" });
    expect(other.stderr).toContain("Project prj_unknown was not found");
    expect(other.code).toBe(3);
  });

  it("says an address it cannot use is not one, instead of 'Invalid URL' or a host named ftp", async () => {
    const hint = "is not an installation's address: give one like https://agentplane.example.com or localhost:8080";
    for (const url of ["not a url", "ftp://localhost:8080", "http://"]) {
      const ran = await runInProcess(["orgs", "list", "--url", url], env);
      expect(ran.code).toBe(1);
      expect(ran.stderr).toBe(`error: "${url}" ${hint}\n`);
    }
    const saved = await runInProcess(["config", "set", "url", "bad url"], env);
    expect(saved.stderr).toBe(`error: "bad url" ${hint}\n`);
    // A scheme in capitals is still http.
    const upper = await runInProcess(
      ["orgs", "list", "--url", p.url.replace("http://", "HTTP://"), "--json", "name"],
      env,
    );
    expect(JSON.parse(upper.stdout)).toContainEqual({ name: "Acme" });
  });

  it.skipIf(!bwrap.available)(
    `takes --start alone as --start true, before or after other flags${bwrap.reason}`,
    async () => {
      const made = async (argv: string[]) => {
        const ran = await runInProcess(["sandboxes", "create", ...argv, "--json", "name,state"], env);
        expect(ran.stderr).toBe("");
        return JSON.parse(ran.stdout);
      };
      expect(await made(["--start", "--name", "started first"])).toEqual({ name: "started first", state: "running" });
      expect(await made(["--name", "started last", "--start"])).toEqual({ name: "started last", state: "running" });
      expect(await made(["--name", "not started", "--start", "false"])).toEqual({
        name: "not started",
        state: "pending",
      });
      const wrong = await runInProcess(["sandboxes", "create", "--name", "x", "--start", "maybe"], env);
      expect(wrong.stderr).toBe('error: --start takes true or false, not "maybe"\n');
    },
  );

  it("names --json to someone who asks for JSON as kubectl or az would", async () => {
    for (const flag of ["--output", "-o", "--format"]) {
      const ran = await runInProcess(["orgs", "list", flag, "json"], env);
      expect(ran.code).toBe(1);
      expect(ran.stderr).toBe(`error: unknown option '${flag}' (JSON is --json)\n`);
    }
    expect((await runInProcess(["orgs", "list", "--outpt"], env)).stderr).toBe("error: unknown option '--outpt'\n");
  });

  it("says which token was refused and what to do about it", async () => {
    const wrong = await runInProcess(["orgs", "list"], { ...env, AGENTPLANE_TOKEN: "apl_x_not-a-token" });
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toMatch(/^error: Unauthenticated: The token is not valid \(request id [^)]+\)\n/);
    expect(wrong.stderr).toContain(
      "\n  the token in AGENTPLANE_TOKEN was refused: set it to a valid token, or unset it to use the one `agentplane auth login` stored\n",
    );
    // A stored token that was revoked since: log in again.
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    const revoked = await sdk.request("createApiToken", { path: { orgId }, body: { name: "laptop" } });
    const stored = tempConfigDir();
    try {
      const storedEnv = { AGENTPLANE_CONFIG_DIR: stored.dir, AGENTPLANE_URL: p.url, AGENTPLANE_KEYRING: "off" };
      expect((await runCli(["auth", "login", "--with-token"], storedEnv, revoked.token)).code).toBe(0);
      await sdk.request("revokeApiToken", { path: { tokenId: revoked.id } });
      const refused = await runInProcess(["orgs", "list"], storedEnv);
      expect(refused.code).toBe(4);
      expect(refused.stderr).toContain(
        `\n  the token stored for ${new URL(p.url).host} was refused (revoked or expired): run \`agentplane auth login\` again\n`,
      );
      // Logging in with a token that is refused says only that: the hint would send you in a circle.
      const login = await runCli(["auth", "login", "--with-token"], storedEnv, "apl_x_not-a-token");
      expect(login.code).toBe(4);
      expect(login.stderr).not.toContain("auth login` again");
    } finally {
      stored.remove();
    }
  });

  it("says a help topic is no command, with the closest one, instead of printing the root's help", async () => {
    const wrong = await runInProcess(["help", "sandbox"], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe("error: unknown command 'sandbox' (did you mean sandboxes?)\n");
    expect(wrong.stdout).toBe("");
    const nested = await runInProcess(["help", "sandboxes", "crate"], env);
    expect(nested.stderr).toBe("error: unknown command 'crate' (did you mean create?)\n");
    const known = await runInProcess(["help", "sandboxes", "create"], env);
    expect(known.code).toBe(0);
    expect(known.stdout).toMatch(/^Usage: agentplane sandboxes create \[options\]/);
    // Words after a command that has no subcommands are its arguments: never run, only its help.
    const leaf = await runInProcess(["help", "sandboxes", "delete", "sbx_x"], env);
    expect(leaf.code).toBe(0);
    expect(leaf.stdout).toMatch(/^Usage: agentplane sandboxes delete/);
  });
});
