import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalDriver } from "../src/driver/local/local-driver.ts";
import type { SandboxRuntimeSpec } from "../src/driver/types.ts";
import { runCommand } from "../src/exec/run-command.ts";
import { newDriver, requireBwrap } from "./helpers.ts";

const bwrap = requireBwrap();

/**
 * The loader of every host process that starts a sandbox's command (bwrap, nsenter, the shell that
 * joins cgroups) writes LD_DEBUG output to LD_DEBUG_OUTPUT.<pid>: a file in this host directory
 * means a variable of the sandbox reached the host's loader, as LD_PRELOAD of a library the sandbox
 * wrote into its workspace would, running its code as the service's user.
 */
describe.skipIf(!bwrap.available)(`sandbox environment and the host${bwrap.reason}`, () => {
  let driver: LocalDriver;
  const hostDir = mkdtempSync(join(tmpdir(), "agentplane-ld-"));
  const loaderEnv = { LD_DEBUG: "files", LD_DEBUG_OUTPUT: join(hostDir, "ld") };
  const spec = (id: string, env: Record<string, string> = {}): SandboxRuntimeSpec => ({
    id,
    slug: id.replace(/_/g, "-"),
    image: "default",
    env,
    resources: { maxProcesses: 64 },
  });

  beforeAll(async () => {
    driver = newDriver();
    await driver.start(spec("sbx_env", loaderEnv));
  });
  afterAll(async () => {
    await driver.close();
    rmSync(hostDir, { recursive: true, force: true });
  });

  it("keeps the loader variables of a sandbox's spec and of an exec off the host, yet passes them in", async () => {
    const r = await runCommand(driver, "sbx_env", {
      argv: ["/bin/sh", "-c", 'printf "%s|%s|%s" "$LD_DEBUG" "$LD_LIBRARY_PATH" "$GCONV_PATH"'],
      env: { LD_LIBRARY_PATH: "/workspace/lib", GCONV_PATH: "/workspace/gconv" },
      timeoutMs: 10_000,
    });
    // The loader inside the sandbox follows LD_DEBUG too; its lines are not what this asserts.
    expect(r.stdout).toContain("files|/workspace/lib|/workspace/gconv");
    expect(readdirSync(hostDir)).toEqual([]);
    // On a terminal too (util-linux `script` between the host and the command).
    const tty = await driver.exec("sbx_env", {
      argv: ["/bin/sh", "-c", 'printf "preload=%s" "$LD_PRELOAD"'],
      env: { LD_PRELOAD: join(hostDir, "missing.so") },
      tty: true,
    });
    let screen = "";
    tty.stdout.on("data", (chunk: Buffer) => {
      screen += chunk.toString("utf8");
    });
    expect((await tty.exited).exitCode).toBe(0);
    expect(screen).toContain(`preload=${join(hostDir, "missing.so")}`);
    expect(readdirSync(hostDir)).toEqual([]);
  });

  it("shows the host's TLS roots but not /etc/ssl/private, which the service's user may read", async () => {
    const ssl = await runCommand(driver, "sbx_env", {
      argv: ["/bin/sh", "-c", "ls -A /etc/ssl; test -d /etc/ssl/private && echo private"],
      env: { LD_DEBUG: "" },
      timeoutMs: 10_000,
    });
    expect(ssl.stdout).not.toContain("private");
    if (existsSync("/etc/ssl/certs")) expect(ssl.stdout).toContain("certs");
  });

  it("still answers a missing command as a shell would when variables are exported inside", async () => {
    const r = await runCommand(driver, "sbx_env", {
      argv: ["no-such-program"],
      env: { LD_LIBRARY_PATH: "/workspace/lib" },
      timeoutMs: 10_000,
    });
    expect(r.exitCode).toBe(127);
    expect(r.stderr).toBe("no-such-program: command not found\n");
    const inCwd = await runCommand(driver, "sbx_env", {
      argv: ["no-such-program"],
      cwd: "/tmp",
      env: { LD_LIBRARY_PATH: "/workspace/lib" },
      timeoutMs: 10_000,
    });
    expect(inCwd.stderr).toBe("no-such-program: command not found\n");
  });
});
