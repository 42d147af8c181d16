// Ctrl-C (SIGINT) during `sandboxes exec` without a terminal ends the remote command too, not only
// the CLI: nothing keeps running in the sandbox once the CLI is gone, and the CLI ends quietly with
// 130, the way SIGINT ends a process, not with an error about a lost connection.
import { spawn } from "node:child_process";
import { createAgentplaneClient } from "@agentplane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBwrap } from "../../../apps/platform/test/sandbox-harness.ts";
import { MAIN, runCli, startTestPlatform, type TestPlatform, tempConfigDir } from "./harness.ts";

const bwrap = requireBwrap();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!bwrap.available)(`Ctrl-C during sandboxes exec${bwrap.reason}`, () => {
  let p: TestPlatform;
  const config = tempConfigDir();
  let env: Record<string, string>;
  let sandboxId = "";

  beforeAll(async () => {
    p = await startTestPlatform();
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    const org = await sdk.request("createOrganization", { body: { name: "Acme" } });
    const project = await sdk.request("createProject", { path: { orgId: org.id }, body: { name: "p" } });
    sandboxId = (
      await sdk.request("createSandbox", { path: { projectId: project.id }, body: { name: "box", start: true } })
    ).id;
    env = {
      AGENTPLANE_CONFIG_DIR: config.dir,
      AGENTPLANE_URL: p.url,
      AGENTPLANE_TOKEN: p.ownerToken,
      AGENTPLANE_PROJECT: project.id,
    };
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    config.remove();
  });

  it("stops the remote command and exits the way SIGINT does", async () => {
    const child = spawn(
      process.execPath,
      [
        MAIN,
        "sandboxes",
        "exec",
        sandboxId,
        "--",
        "sh",
        "-c",
        // The first heartbeat is written before "started": an interrupt right after it still finds one.
        "date +%s%N > beat; echo started; while :; do date +%s%N > beat; sleep 0.1; done",
      ],
      {
        env: { PATH: process.env.PATH ?? "", HOME: config.dir, NO_COLOR: "1", ...env },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c;
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c;
    });
    const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on("close", (code, signal) => resolve({ code, signal })),
    );
    for (let i = 0; i < 100 && !stdout.includes("started"); i++) await sleep(100);
    expect(stdout).toBe("started\n");
    const sent = Date.now();
    child.kill("SIGINT");
    expect(await closed).toEqual({ code: 130, signal: null });
    expect(Date.now() - sent).toBeLessThan(5_000);
    expect(stderr).toBe("");
    // The remote loop wrote its heartbeat every 100 ms; stopped, it writes no more.
    const beat = async () => (await runCli(["sandboxes", "exec", sandboxId, "--", "cat", "beat"], env)).stdout;
    const first = await beat();
    await sleep(600);
    const second = await beat();
    expect(first).toMatch(/^\d+\n$/);
    expect(second).toBe(first);
  });
});
