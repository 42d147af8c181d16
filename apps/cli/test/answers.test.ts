import { createAgentplaneClient } from "@agentplane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBwrap } from "../../platform/test/sandbox-harness.ts";
import { runCli, runInProcess, startTestPlatform, type TestPlatform, tempConfigDir } from "./harness.ts";

const bwrap = requireBwrap();

describe("answers as people and scripts read them: run's exit code, revoked tokens, lists in an envelope", () => {
  let p: TestPlatform;
  const config = tempConfigDir();
  let env: Record<string, string>;
  let orgId = "";
  let projectId = "";

  beforeAll(async () => {
    p = await startTestPlatform();
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    orgId = (await sdk.request("createOrganization", { body: { name: "Acme" } })).id;
    projectId = (await sdk.request("createProject", { path: { orgId }, body: { name: "p" } })).id;
    env = {
      AGENTPLANE_CONFIG_DIR: config.dir,
      AGENTPLANE_URL: p.url,
      AGENTPLANE_TOKEN: p.ownerToken,
      AGENTPLANE_ORG: orgId,
      AGENTPLANE_PROJECT: projectId,
    };
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    config.remove();
  });

  it.skipIf(!bwrap.available)(`sandboxes run and sessions run exit with the remote code${bwrap.reason}`, async () => {
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    const box = await sdk.request("createSandbox", { path: { projectId }, body: { name: "run", start: true } });
    const run = (command: string, ...more: string[]) =>
      runCli(
        ["sandboxes", "run", "--sandbox-id", box.id, "--command", JSON.stringify(["sh", "-c", command]), ...more],
        env,
      );
    const failed = await run("echo out; exit 3");
    expect(failed.stderr).toBe("");
    expect(failed.stdout).toMatch(/^exitCode\t3\nstdout\tout ?\n/);
    expect(failed.code).toBe(3);
    // With --json too, and 0 when the command succeeds.
    const json = await run("exit 7", "--json", "exitCode");
    expect(JSON.parse(json.stdout)).toEqual({ exitCode: 7 });
    expect(json.code).toBe(7);
    expect((await run("true")).code).toBe(0);
    // The CLI's own failures keep their codes: an unknown sandbox is 3 only because the API said 404.
    const missing = await runCli(["sandboxes", "run", "--sandbox-id", "sbx_missing", "--command", '["true"]'], env);
    expect(missing.stderr).toMatch(/^error: /);
    expect(missing.code).toBe(3);

    const session = await sdk.request("createShellSession", { path: { projectId }, body: { sandboxId: box.id } });
    const inSession = await runCli(["sessions", "run", session.id, "--command", "sh -c 'exit 5'"], env);
    expect(inSession.stdout).toMatch(/^exitCode\t5\n/);
    expect(inSession.code).toBe(5);
    const help = await runInProcess(["sandboxes", "run", "--help"], env);
    expect(help.stdout).toContain("Exits with the remote command's exit code");
  });
});
