import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAIN, runCli, startTestPlatform, type TestPlatform, tempConfigDir } from "./harness.ts";

describe("auth login on an installation that is not activated: the activation device flow", () => {
  let p: TestPlatform;
  const config = tempConfigDir();

  beforeAll(async () => {
    p = await startTestPlatform({ activated: false });
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    config.remove();
  });

  it("prints the code and address on stderr, waits for the page, and stores the owner token", async () => {
    expect(p.setupCode).toBeTruthy();
    const env = { PATH: process.env.PATH ?? "", HOME: config.dir, AGENTPLANE_CONFIG_DIR: config.dir, NO_COLOR: "1" };
    const child = spawn(process.execPath, [MAIN, "auth", "login", "--url", p.url], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c;
    });
    const code = await new Promise<string>((resolve, reject) => {
      child.stderr.on("data", (c: Buffer) => {
        stderr += c;
        const m = /one-time code: (\S+)/.exec(stderr);
        if (m && /\/activate/.test(stderr)) resolve(m[1]!);
      });
      child.once("exit", () => reject(new Error(`login ended early: ${stderr}`)));
    });
    const exited = new Promise<number>((resolve) => child.once("exit", (c) => resolve(c ?? -1)));
    expect(stderr).toMatch(/Then open http:\/\/\S+\/activate /);

    // The person enters the code and the setup code on the platform's own activation page.
    const page = await fetch(`${p.url}/activate`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ userCode: code, setupCode: p.setupCode! }).toString(),
    });
    expect(page.status).toBe(200);
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/Logged in to 127\.0\.0\.1:\d+ as /);
    // Nothing secret went to stdout.
    expect(stdout).toBe("");

    const token = (await runCli(["auth", "token"], env)).stdout.trim();
    expect(token).toMatch(/^apl_/);
    const status = JSON.parse((await runCli(["auth", "status", "--json"], env)).stdout) as { status: string }[];
    expect(status).toEqual([expect.objectContaining({ status: "ok", tokenSource: "store" })]);
    expect((await runCli(["orgs", "list", "--json"], env)).code).toBe(0);

    // The owner token of the activation is forgotten locally, never revoked: it may be the only one.
    const logout = await runCli(["auth", "logout"], env);
    expect(logout.code).toBe(0);
    expect((await runCli(["orgs", "list"], env)).code).toBe(4);
    const me = await fetch(`${p.url}/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
  }, 90_000);
});
