import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { LocalDriver } from "../src/driver/local/local-driver.ts";
import type { SandboxRuntimeSpec } from "../src/driver/types.ts";
import { runCommand } from "../src/exec/run-command.ts";
import { newDriver, requireBwrap, tempDataDir } from "./helpers.ts";

const bwrap = requireBwrap();

function spec(id: string, extra: Partial<SandboxRuntimeSpec> = {}): SandboxRuntimeSpec {
  return { id, slug: id.replace(/_/g, "-"), image: "default", env: {}, resources: {}, ...extra };
}

describe.skipIf(!bwrap.available)(`local driver isolation${bwrap.reason}`, () => {
  let driver: LocalDriver;
  const dataDir = tempDataDir();
  const sh = (id: string, script: string, extra: Partial<Parameters<typeof runCommand>[2]> = {}) =>
    runCommand(driver, id, { argv: ["/bin/sh", "-c", script], timeoutMs: 10_000, ...extra });

  beforeAll(async () => {
    driver = newDriver({ dataDir });
    await driver.start(spec("sbx_a"));
    await driver.start(spec("sbx_f", { resources: { maxProcesses: 64, memoryMiB: 256 } }));
    await driver.start(spec("sbx_b", { command: ["sleep", "4242"] }));
  });
  afterAll(() => driver.close());

  it("runs as an unprivileged user in /workspace with its own hostname", async () => {
    const r = await sh("sbx_a", "id -u; pwd; hostname; grep CapEff /proc/self/status");
    expect(r.stdout).toBe("1000\n/workspace\nsbx-a\nCapEff:\t0000000000000000\n");
  });

  it("cannot read host files outside the allowed directories nor write system directories", async () => {
    // A file of this run's own: a fixed path another user left in /tmp would refuse the write.
    const hostDir = mkdtempSync(join(tmpdir(), "agentplane-host-"));
    const secret = join(hostDir, "secret");
    writeFileSync(secret, "secret");
    const r = await sh(
      "sbx_a",
      `cat ${secret}; cat /etc/shadow; ls /root; ls /work; touch /usr/x; touch /etc/x; echo ok > /workspace/w && echo wrote`,
    );
    rmSync(hostDir, { recursive: true, force: true });
    expect(r.stdout).toBe("wrote\n");
    expect(r.stderr).toMatch(/No such file/);
    expect(r.stderr).toMatch(/Read-only file system/);
    expect(readFileSync(join(driver.workspaceDir("sbx_a"), "w"), "utf8")).toBe("ok\n");
  });

  it("sees neither host processes nor those of other sandboxes", async () => {
    const r = await sh("sbx_a", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '");
    expect(r.stdout).not.toMatch(/vitest|node/);
    expect(r.stdout).not.toMatch(/4242/);
    expect(r.stdout).toMatch(/sleep infinity/);
    const b = await sh("sbx_b", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '");
    expect(b.stdout).toMatch(/sleep 4242/);
  });

  it("shows no host path of its data dir in any command line, pid 1's (bwrap's) included", async () => {
    const r = await sh(
      "sbx_a",
      "sleep 33 & tr '\\0' ' ' < /proc/1/cmdline; echo; for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done; ps -eo args",
    );
    expect(r.exitCode).toBe(0);
    // What is read is bwrap's, the sandbox's command's and this one's.
    expect(r.stdout).toMatch(/^\S*bwrap /);
    expect(r.stdout).toMatch(/sleep infinity/);
    expect(r.stdout).toMatch(/sleep 33/);
    expect(r.stdout).not.toContain(dataDir);
    expect(r.stdout).not.toContain(driver.workspaceDir("sbx_a"));
    expect(r.stdout).not.toContain(join("run", "sbx_a"));
    expect(r.stdout).not.toContain("agentplane-sandbox-mounts-");
  });

  it("has no network egress: connecting to the host's Postgres port fails", async () => {
    const r = await runCommand(driver, "sbx_a", {
      argv: ["/bin/bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/5432 && echo connected"],
      timeoutMs: 5000,
    });
    expect(r.exitCode).not.toBe(0);
    expect(r.stdout).not.toMatch(/connected/);
    const ifaces = await sh("sbx_a", "ls /sys/class/net 2>/dev/null || cat /proc/net/dev");
    expect(ifaces.stdout).not.toMatch(/eth0/);
  });

  it("contains a fork bomb with the process limit where cgroups are writable", async (ctx) => {
    if (!driver.cgroups.controllers.includes("pids")) ctx.skip();
    const r = await sh(
      "sbx_f",
      "i=0; while [ $i -lt 200 ]; do sleep 30 & i=$((i+1)); done 2>/dev/null; ls /proc | grep -c '^[0-9]'",
      {
        timeoutMs: 15_000,
      },
    );
    expect(Number(r.stdout.trim())).toBeLessThanOrEqual(64);
    const host = await runCommand(driver, "sbx_a", { argv: ["/bin/sh", "-c", "echo unaffected"], timeoutMs: 5000 });
    expect(host.stdout).toBe("unaffected\n");
    await driver.stop("sbx_f");
  });

  it("shares /tmp between processes of one sandbox but not across sandboxes", async () => {
    await sh("sbx_a", "echo a > /tmp/mine");
    expect((await sh("sbx_a", "cat /tmp/mine")).stdout).toBe("a\n");
    expect((await sh("sbx_b", "cat /tmp/mine")).exitCode).not.toBe(0);
  });
});

describe.skipIf(!bwrap.available)(`local driver exec${bwrap.reason}`, () => {
  let driver: LocalDriver;
  beforeAll(async () => {
    driver = newDriver();
    await driver.start(spec("sbx_e"));
  });
  afterAll(() => driver.close());

  it("passes stdin, env and cwd, and reports exit codes", async () => {
    const r = await runCommand(driver, "sbx_e", {
      argv: ["/bin/sh", "-c", 'mkdir -p /workspace/sub; cat; echo "$GREETING"; exit 7'],
      stdin: "from stdin\n",
      env: { GREETING: "hello" },
      timeoutMs: 5000,
    });
    expect(r).toMatchObject({ exitCode: 7, stdout: "from stdin\nhello\n", timedOut: false });
    const cwd = await runCommand(driver, "sbx_e", { argv: ["pwd"], cwd: "/workspace/sub", timeoutMs: 5000 });
    expect(cwd.stdout).toBe("/workspace/sub\n");
  });

  it("answers a command the sandbox lacks or cannot execute as a shell would", async () => {
    const run = (argv: string[]) => runCommand(driver, "sbx_e", { argv, timeoutMs: 5000 });
    expect(await run(["nosuchcmd", "arg"])).toMatchObject({
      exitCode: 127,
      stdout: "",
      stderr: "nosuchcmd: command not found\n",
    });
    expect(await run(["/no/such/cmd"])).toMatchObject({
      exitCode: 127,
      stderr: "/no/such/cmd: No such file or directory\n",
    });
    expect(await run(["/etc/passwd"])).toMatchObject({ exitCode: 126, stderr: "/etc/passwd: Permission denied\n" });
    // With a working directory too, where a shell changes to it first.
    const inSub = await runCommand(driver, "sbx_e", { argv: ["nosuchcmd"], cwd: "/workspace", timeoutMs: 5000 });
    expect(inSub).toMatchObject({ exitCode: 127, stderr: "nosuchcmd: command not found\n" });
    // The same text from a command that ran, with another exit code, is its own output.
    const line = "nsenter: failed to execute sh: No such file or directory";
    const own = await run(["sh", "-c", `echo "${line}" >&2; exit 1`]);
    expect(own).toMatchObject({ exitCode: 1, stderr: `${line}\n` });
  });

  it("kills the command and what it forked at the timeout", async () => {
    const r = await runCommand(driver, "sbx_e", { argv: ["/bin/sh", "-c", "sleep 30 & sleep 30"], timeoutMs: 300 });
    expect(r.timedOut).toBe(true);
    expect(r.durationMs).toBeLessThan(3000);
    const ps = await runCommand(driver, "sbx_e", {
      argv: ["/bin/sh", "-c", "ps -eo args | grep -c '^sleep 30'"],
      timeoutMs: 5000,
    });
    expect(ps.stdout.trim()).toBe("0");
  });

  it("truncates output at the cap and keeps draining", async () => {
    const r = await runCommand(driver, "sbx_e", {
      argv: ["/bin/sh", "-c", "head -c 3000000 /dev/zero; head -c 10 /dev/zero >&2"],
      timeoutMs: 10_000,
      outputCap: 1024 * 1024,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.length).toBe(1024 * 1024);
    expect(r.stdoutTruncated).toBe(true);
    expect(r.stderrTruncated).toBe(false);
  });

  it("keeps output that arrives after the exit, unless a background child holds it open", async () => {
    // Under load the exit (from the spawner, over IPC) can be heard well before the command's last
    // output (a socket) is read. Here every exec's output reaches runCommand 400 ms after its exit.
    const realExec = driver.exec.bind(driver);
    driver.exec = async (id, options) => {
      const proc = await realExec(id, options);
      const late = new PassThrough();
      const chunks: Buffer[] = [];
      proc.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
      void proc.exited.then(() => setTimeout(() => late.end(Buffer.concat(chunks)), 400));
      return { ...proc, stdout: late };
    };
    try {
      const r = await runCommand(driver, "sbx_e", { argv: ["/bin/sh", "-c", "echo all of it"], timeoutMs: 10_000 });
      expect(r).toMatchObject({ exitCode: 0, stdout: "all of it\n" });
    } finally {
      driver.exec = realExec;
    }
    // A child left running holds the output open: the exec still answers at once, with what came.
    const started = Date.now();
    const held = await runCommand(driver, "sbx_e", {
      argv: ["/bin/sh", "-c", "echo before; sleep 30 & echo after"],
      timeoutMs: 10_000,
    });
    expect(held).toMatchObject({ exitCode: 0, stdout: "before\nafter\n" });
    expect(Date.now() - started).toBeLessThan(3000);
    await runCommand(driver, "sbx_e", { argv: ["/bin/sh", "-c", "pkill -f 'sleep 30' || true"], timeoutMs: 5000 });
  });

  it("keeps the workspace across restarts and reports an exited main process", async () => {
    await runCommand(driver, "sbx_e", { argv: ["/bin/sh", "-c", "echo kept > /workspace/f"], timeoutMs: 5000 });
    await driver.stop("sbx_e");
    expect((await driver.status("sbx_e")).phase).toBe("stopped");
    await driver.start(spec("sbx_e"));
    const r = await runCommand(driver, "sbx_e", { argv: ["cat", "/workspace/f"], timeoutMs: 5000 });
    expect(r.stdout).toBe("kept\n");

    const events: string[] = [];
    driver.onEvent((e) => events.push(`${e.sandboxId}:${e.status.phase}`));
    // A main process that exits at once is reported either way: as the start's own failure when it
    // ends before the sandbox is up (a loaded machine), else as a failed event afterwards.
    const start = await driver.start(spec("sbx_x", { command: ["/bin/sh", "-c", "exit 3"] })).then(
      () => undefined,
      (err: Error) => err,
    );
    if (start) expect(start.message).toMatch(/exited with code 3/);
    else await vi.waitFor(() => expect(events).toContain("sbx_x:failed"), { timeout: 5000 });
  });

  it("refuses an unknown image with a 400 problem", () => {
    expect(() => driver.validateImage("nope")).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe("local driver without bwrap", () => {
  it("names the bubblewrap package when bwrap is missing", async () => {
    const driver = newDriver({ searchPath: ["/nonexistent"] });
    await expect(driver.start(spec("sbx_n"))).rejects.toThrow(/bubblewrap/);
  });

  it("runs without isolation when explicitly configured", async () => {
    const driver = newDriver({ searchPath: ["/nonexistent"], isolation: "none" });
    await driver.start(spec("sbx_n"));
    const r = await runCommand(driver, "sbx_n", { argv: ["/bin/sh", "-c", "echo $HOME"], timeoutMs: 5000 });
    expect(r.stdout.trim()).toBe(driver.workspaceDir("sbx_n"));
    await driver.close();
  });
});
