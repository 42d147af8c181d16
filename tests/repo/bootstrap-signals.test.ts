import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const BOOTSTRAP = fileURLToPath(new URL("../../scripts/bootstrap.mjs", import.meta.url));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("scripts/bootstrap.mjs (what npm start runs)", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentplane-bootstrap-"));
  let childPid = 0;
  afterAll(() => {
    if (childPid && alive(childPid)) process.kill(childPid, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("passes a SIGTERM on to the job it runs, so stopping it stops the platform", async () => {
    const marker = join(dir, "terminated");
    const job = `
      process.on("SIGTERM", () => { require("node:fs").writeFileSync(${JSON.stringify(marker)}, "SIGTERM"); process.exit(0); });
      setInterval(() => {}, 1000);
      console.log("ready " + process.pid);`;
    const launcher = spawn(process.execPath, [BOOTSTRAP, "node", "-e", job], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    launcher.stdout.on("data", (c: Buffer) => {
      out += c;
    });
    const exited = new Promise<number | null>((resolve) => launcher.on("exit", (code) => resolve(code)));
    for (let i = 0; i < 200 && !/ready \d+/.test(out); i++) await new Promise((r) => setTimeout(r, 50));
    childPid = Number(out.match(/ready (\d+)/)?.[1]);
    expect(childPid).toBeGreaterThan(0);

    launcher.kill("SIGTERM");
    const code = await exited;
    for (let i = 0; i < 100 && alive(childPid); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(childPid), "the job outlived its launcher").toBe(false);
    expect(existsSync(marker) && readFileSync(marker, "utf8")).toBe("SIGTERM");
    // The job's own exit code is the launcher's.
    expect(code).toBe(0);
  }, 60_000);

  it("names the job and its script, never the arguments after it (a secret, a whole document)", async () => {
    const script = join(dir, "job.mjs");
    writeFileSync(script, "process.exit(Number(process.argv[3]));\n");
    const launcher = spawn(process.execPath, [BOOTSTRAP, "node", script, "--secret", "7", "sk-do-not-print"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    launcher.stderr.on("data", (c: Buffer) => {
      err += c;
    });
    const code = await new Promise<number | null>((resolve) => launcher.on("exit", (c) => resolve(c)));
    expect(code).toBe(7);
    expect(err).toContain(`[agentplane] running node ${script} on Node `);
    expect(err).not.toContain("sk-do-not-print");
    expect(err).not.toContain("--secret");
  }, 60_000);
});
