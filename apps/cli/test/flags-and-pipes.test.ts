import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { createAgentplaneClient } from "@agentplane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBwrap } from "../../platform/test/sandbox-harness.ts";
import { MAIN, runCli, runInProcess, startTestPlatform, type TestPlatform, tempConfigDir } from "./harness.ts";

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Runs the CLI with a stdout whose reader is already gone, as `agentplane … | head -1` leaves it. */
function runIntoClosedPipe(argv: string[], env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...argv], {
      env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stderr }));
  });
}

describe("a reader that stops early and an installation that cannot be reached", () => {
  const config = tempConfigDir();
  afterAll(() => config.remove());

  it("ends quietly with 0 when the pipe closes before the output is written", async () => {
    const help = await runIntoClosedPipe(["--help"], { AGENTPLANE_CONFIG_DIR: config.dir });
    expect(help.stderr).toBe("");
    expect(help.code).toBe(0);
  });

  it("names the address and the reason instead of fetch's bare 'fetch failed'", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const env = { AGENTPLANE_CONFIG_DIR: config.dir, AGENTPLANE_TOKEN: "apl_x" };
    const refused = await runInProcess(["orgs", "list", "--url", url], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`error: cannot reach ${url}: connection refused (is it running, on that port?)\n`);
    const fromEnv = await runInProcess(["projects", "list"], { ...env, AGENTPLANE_URL: url });
    expect(fromEnv.stderr).toContain(`cannot reach ${url}: connection refused`);
  });

  it("has auth status say why an installation is unreachable, exit 1 (not 4: no token was refused)", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const env = { AGENTPLANE_CONFIG_DIR: config.dir, AGENTPLANE_TOKEN: "apl_x", AGENTPLANE_URL: url };
    const status = await runInProcess(["auth", "status", "--json", "status"], env);
    expect(JSON.parse(status.stdout)).toEqual([
      { status: "unreachable: connection refused (is it running, on that port?)" },
    ]);
    expect(status.code).toBe(1);
  });
});

const bwrap = requireBwrap();

describe("against the platform: policy version, run's project, passthrough bodies, addresses", () => {
  let p: TestPlatform;
  const config = tempConfigDir();
  let env: Record<string, string>;
  let orgId = "";
  let projectId = "";
  let policyId = "";

  beforeAll(async () => {
    p = await startTestPlatform();
    env = { AGENTPLANE_CONFIG_DIR: config.dir, AGENTPLANE_URL: p.url, AGENTPLANE_TOKEN: p.ownerToken };
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    const org = await sdk.request("createOrganization", { body: { name: "Acme" } });
    orgId = org.id;
    projectId = (await sdk.request("createProject", { path: { orgId: org.id }, body: { name: "p" } })).id;
    const cedar =
      '@id("echo-only")\npermit(principal, action == Action::"sandbox:exec", resource)\nwhen { context.program == "echo" };';
    policyId = (await sdk.request("createProjectPolicy", { path: { projectId }, body: { name: "echo", cedar } })).id;
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    config.remove();
  });

  it("takes --policy-version as a number or latest, and lists it in the help", async () => {
    const help = await runInProcess(["bindings", "create", "--help"], env);
    expect(help.stdout).toMatch(/--policy-version <value>\s+The policy version to apply/);
    const base = ["bindings", "create", "--project", projectId, "--policy-id", policyId];
    const latest = await runInProcess([...base, "--policy-version", "latest", "--json", "version"], env);
    expect(latest.stderr).toBe("");
    expect(JSON.parse(latest.stdout)).toEqual({ version: "latest" });
    const pinned = await runInProcess([...base, "--policy-version", "1", "--json", "version"], env);
    expect(JSON.parse(pinned.stdout)).toEqual({ version: 1 });
    const wrong = await runInProcess([...base, "--policy-version", "newest"], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe('error: --policy-version takes an integer or latest, not "newest"\n');
    const bindings = await runInProcess(["bindings", "list", "--project", projectId, "--json", "version"], env);
    expect(JSON.parse(bindings.stdout)).toHaveLength(2);
  });

  it("refuses --version after a command instead of printing the version and creating nothing", async () => {
    const ran = await runCli(
      ["bindings", "create", "--project", projectId, "--policy-id", policyId, "--version", "1"],
      env,
    );
    expect(ran.stdout).toBe("");
    expect(ran.stderr).toContain("unknown option '--version'");
    expect(ran.code).toBe(1);
    const version = await runCli(["--version"], env);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const before = await runCli(["--url", p.url, "-v"], env);
    expect(before.stdout).toBe(version.stdout);
  });

  it("takes an address on this machine without a scheme as http, and says when https meets plain HTTP", async () => {
    const hostPort = p.url.replace(/^http:\/\//, "");
    const bare = await runInProcess(["orgs", "list", "--url", hostPort, "--json", "name"], env);
    expect(bare.stderr).toBe("");
    expect(JSON.parse(bare.stdout)).toContainEqual({ name: "Acme" });
    const tls = await runInProcess(["orgs", "list", "--url", `https://${hostPort}`], env);
    expect(tls.code).toBe(1);
    expect(tls.stderr).toBe(
      `error: cannot reach https://${hostPort}: it answered plain HTTP to a TLS handshake (use http://)\n`,
    );
  });

  it("runs the operations the API answers without a token without asking for one", async () => {
    const anonymous = { AGENTPLANE_CONFIG_DIR: config.dir, AGENTPLANE_URL: p.url };
    const device = await runInProcess(["auth", "device", "start", "--json", "interval"], anonymous);
    expect(device.stderr).toBe("");
    expect(JSON.parse(device.stdout)).toEqual({ interval: expect.any(Number) });
    const status = await runInProcess(["installation", "get", "--json", "status"], anonymous);
    expect(JSON.parse(status.stdout)).toEqual({ status: "activated" });
    // Anything else still needs one: exit 4 and the login hint.
    const orgs = await runInProcess(["orgs", "list"], anonymous);
    expect(orgs.code).toBe(4);
  });

  it("reports a refused exec with the problem's request id, like every other error", async () => {
    const ran = await runInProcess(["sandboxes", "exec", "sbx_nope", "--project", projectId, "--", "ls"], env);
    expect(ran.code).toBe(3);
    expect(ran.stderr).toMatch(/^error: Not Found: Sandbox sbx_nope was not found \(request id [\w-]+\)\n$/);
  });

  it("takes a comma-separated list of numbers as numbers", async () => {
    const argv = ["limits", "create", "--org", orgId, "--amount-usd", "5", "--period", "daily"];
    const made = await runInProcess([...argv, "--alert-thresholds", "50,90", "--json", "alertThresholds"], env);
    expect(made.stderr).toBe("");
    expect(JSON.parse(made.stdout)).toEqual({ alertThresholds: [50, 90] });
    const wrong = await runInProcess([...argv, "--alert-thresholds", "50,x"], env);
    expect(wrong.stderr).toBe('error: --alert-thresholds takes numbers, e.g. 50,80 or [50,80], not "x"\n');
  });

  it("sends -f fields as a POST body through the passthrough commands, never a GET with a body", async () => {
    // No provider credential here: the proxy answers its own problem, which proves the POST got there.
    const sent = await runInProcess(["llm", "request", "cloud-b/family-1/v1/messages", "-f", "max_tokens=8"], env);
    expect(sent.code).not.toBe(0);
    expect(sent.stderr).not.toContain("cannot have body");
    expect(sent.stderr).toMatch(/\(request id [\w-]+\)/);
    const get = await runInProcess(["llm", "request", "cloud-b/x", "-X", "get", "-f", "a=1"], env);
    expect(get.code).toBe(1);
    expect(get.stderr).toBe("error: a GET request has no body: leave out -f and --input, or pass -X POST\n");
    // A model call is a POST with a body: without one, the CLI says so before sending a request.
    const bare = await runInProcess(["llm", "request", "cloud-b/family-1/v1/messages"], env);
    expect(bare.code).toBe(1);
    expect(bare.stderr).toBe("error: a model call has a body: pass -f key=value (repeatable) or --input <file>\n");
  });

  it.skipIf(!bwrap.available)(`sandboxes run takes its project like --project does${bwrap.reason}`, async () => {
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    const box = await sdk.request("createSandbox", { path: { projectId }, body: { name: "run", start: true } });
    const argv = ["sandboxes", "run", "--sandbox-id", box.id, "--command", '["echo","hi"]', "--json", "stdout"];
    const help = await runInProcess(["sandboxes", "run", "--help"], env);
    expect(help.stdout).not.toMatch(/--project-id <value>[^\n]*\(required\)/);
    const ran = await runInProcess(argv, { ...env, AGENTPLANE_PROJECT: projectId });
    expect(ran.stderr).toBe("");
    expect(JSON.parse(ran.stdout)).toEqual({ stdout: "hi\n" });
    // The default saved with `config set project` too, as for every command that takes --project.
    expect((await runInProcess(["config", "set", "project", projectId], env)).code).toBe(0);
    const saved = await runInProcess(argv, env);
    expect(saved.stderr).toBe("");
    expect(JSON.parse(saved.stdout)).toEqual({ stdout: "hi\n" });
    // Named, it is --project as everywhere else; the body field's own name still works, unlisted.
    expect(help.stdout).toMatch(/--project <id> +The project's id/);
    expect(help.stdout).not.toContain("--project-id");
    for (const flag of ["--project", "--project-id"]) {
      const named = await runInProcess([...argv, flag, projectId], { ...env, AGENTPLANE_PROJECT: "prj_other" });
      expect(named.stderr).toBe("");
      expect(JSON.parse(named.stdout)).toEqual({ stdout: "hi\n" });
    }
    const wrong = await runInProcess([...argv, "--project", "prj_nope"], env);
    expect(wrong.stderr).toContain("Project prj_nope was not found");
  });

  it("takes llm providers list's project as --project, like every other command", async () => {
    const listed = await runInProcess(["llm", "providers", "list", "--project", projectId, "--json", "projectId"], env);
    expect(listed.stderr).toBe("");
    expect(JSON.parse(listed.stdout)).toEqual({ projectId });
    const wrong = await runInProcess(["llm", "providers", "list", "--project", "prj_nope"], env);
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain("Project prj_nope was not found");
  });
});
