import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseIdentity, DEFAULT_SANDBOX_HOST_UID } from "../src/driver/local/host-user.ts";
import type { LocalDriver } from "../src/driver/local/local-driver.ts";
import { bwrapLauncher, holdsSysAdmin, runnableByAnyone } from "../src/driver/local/namespaces.ts";
import type { SandboxRuntimeSpec } from "../src/driver/types.ts";
import { runCommand } from "../src/exec/run-command.ts";
import { newDriver, requireBwrap, tempDataDir } from "./helpers.ts";

const bwrap = requireBwrap();
const U = DEFAULT_SANDBOX_HOST_UID;
const spec = (id: string): SandboxRuntimeSpec => ({
  id,
  slug: id.replace(/_/g, "-"),
  image: "default",
  env: {},
  resources: { maxProcesses: 64 },
});

/** The host uid (real, effective, saved, fs) of a process, from /proc. */
function hostUids(pid: number): number[] {
  const line = /^Uid:\s*(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "";
  return line.split(/\s+/).map(Number);
}

// Only root can run sandboxes as another host user; a service of another user runs them as itself
// (local-driver-unprivileged.test.ts).
describe.skipIf(!bwrap.available || !holdsSysAdmin())(`sandboxes of a root service on the host${bwrap.reason}`, () => {
  let driver: LocalDriver;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = tempDataDir();
    // A workspace from before sandboxes had a host user of their own: root's, with root's file.
    mkdirSync(join(dataDir, "workspaces", "sbx_old"), { recursive: true });
    writeFileSync(join(dataDir, "workspaces", "sbx_old", "notes.txt"), "old\n");
    driver = newDriver({ dataDir });
    await driver.start(spec("sbx_user"));
  });
  afterAll(async () => {
    await driver.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("runs every process of a sandbox as its own host user, never as root", async () => {
    expect(driver.describe()).toMatchObject({ sandboxHostUser: `uid ${U}` });
    const r = await runCommand(driver, "sbx_user", {
      argv: ["/bin/sh", "-c", "id -u; sleep 30 & echo $!; grep -E '^(Groups|CapEff)' /proc/self/status"],
      timeoutMs: 10_000,
    });
    expect(r.exitCode).toBe(0);
    const [inside, , groups, caps] = r.stdout.trim().split("\n");
    expect(inside).toBe("1000");
    expect(groups?.trim()).toBe("Groups:");
    expect(caps).toBe("CapEff:\t0000000000000000");
    // Its processes as the host sees them: one an exec left running, and the main process.
    const processes = [...findHostPids("sleep 30"), ...findHostPids("sleep infinity")];
    expect(processes.length).toBeGreaterThanOrEqual(2);
    for (const pid of processes) expect(hostUids(pid)).toEqual([U, U, U, U]);
  });

  it("leaves files of that user on the host, and cannot read root's", async () => {
    const workspace = join(dataDir, "workspaces", "sbx_user");
    writeFileSync(join(workspace, "root-only"), "secret\n", { mode: 0o600 });
    const r = await runCommand(driver, "sbx_user", {
      argv: ["/bin/sh", "-c", "cp /bin/sh s && chmod 4755 s && echo made; cat root-only || echo refused"],
      timeoutMs: 10_000,
    });
    expect(r.stdout).toBe("made\nrefused\n");
    // A setuid file a sandbox leaves is its own user's, and its workspace is that user's alone.
    expect(statSync(join(workspace, "s"))).toMatchObject({ uid: U, gid: U });
    expect(statSync(workspace)).toMatchObject({ uid: U });
    expect((statSync(workspace).mode & 0o777).toString(8)).toBe("700");
    for (const name of ["workspaces", "run"]) {
      const stat = statSync(join(dataDir, name));
      expect({ uid: stat.uid, mode: (stat.mode & 0o777).toString(8) }).toEqual({ uid: 0, mode: "711" });
    }
  });

  it("takes over a workspace made before, with what is in it", async () => {
    await driver.start(spec("sbx_old"));
    const r = await runCommand(driver, "sbx_old", {
      argv: ["/bin/sh", "-c", "echo more >> notes.txt && cat notes.txt"],
      timeoutMs: 10_000,
    });
    expect(r).toMatchObject({ exitCode: 0, stdout: "old\nmore\n" });
    expect(statSync(join(dataDir, "workspaces", "sbx_old", "notes.txt"))).toMatchObject({ uid: U, gid: U });
  });
});

/** Host pids whose command line is `command`. */
function findHostPids(command: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
      if (cmdline === command) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

describe.skipIf(!bwrap.available || !holdsSysAdmin())(`sandboxes mapped to root${bwrap.reason}`, () => {
  it("keeps workspaces, where a sandbox can leave a setuid file of root's, from other users (SANDBOX_HOST_UID=0)", async () => {
    const dataDir = tempDataDir();
    // An earlier start (or an operator) left them open.
    for (const name of ["workspaces", "run"]) mkdirSync(join(dataDir, name), { mode: 0o755 });
    const driver = newDriver({ dataDir, hostUid: 0 });
    try {
      expect(driver.describe()).toMatchObject({ sandboxHostUser: "root (no capabilities)" });
      await driver.start(spec("sbx_suid"));
      const r = await runCommand(driver, "sbx_suid", {
        argv: ["/bin/sh", "-c", "cp /bin/sh /workspace/s && chmod 4755 /workspace/s && echo made"],
        timeoutMs: 10_000,
      });
      expect(r.stdout).toBe("made\n");
      expect(statSync(join(dataDir, "workspaces", "sbx_suid", "s")).uid).toBe(0);
      for (const name of ["workspaces", "run"]) {
        expect((statSync(join(dataDir, name)).mode & 0o777).toString(8)).toBe("700");
      }
    } finally {
      await driver.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("whose host user sandboxes are", () => {
  const open = () => "1\n";
  const inputs = (dataDir: string) => ({
    privileged: true,
    hostUid: U,
    dataDir,
    imageDirs: [],
    canBind: true,
    mountParent: tmpdir(),
    readSysctl: open,
  });

  it("is the configured user for root, the service's own for anyone else, root when told so", () => {
    const dataDir = tempDataDir();
    try {
      expect(chooseIdentity(inputs(dataDir))).toEqual({ identity: { kind: "uid", uid: U } });
      expect(chooseIdentity({ ...inputs(dataDir), privileged: false })).toEqual({ identity: { kind: "self" } });
      expect(chooseIdentity({ ...inputs(dataDir), hostUid: 0 })).toEqual({ identity: { kind: "root" } });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("is root, saying why, where the kernel keeps other users from making user namespaces", () => {
    const dataDir = tempDataDir();
    try {
      for (const [file, setting] of [
        ["/proc/sys/kernel/unprivileged_userns_clone", "kernel.unprivileged_userns_clone"],
        ["/proc/sys/user/max_user_namespaces", "user.max_user_namespaces"],
      ]) {
        const choice = chooseIdentity({
          ...inputs(dataDir),
          readSysctl: (path: string) => (path === file ? "0\n" : "1\n"),
        });
        expect(choice.identity).toEqual({ kind: "root" });
        expect(choice.fallback).toContain(`${setting} is 0`);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("stays the configured user for a data dir or image out of its reach, naming what is in the way", () => {
    const parent = mkdtempSync(join(tmpdir(), "sandbox-closed-"));
    chmodSync(parent, 0o700);
    const open = tempDataDir();
    try {
      const dataDir = join(parent, "data");
      expect(chooseIdentity(inputs(dataDir))).toEqual({
        identity: { kind: "uid", uid: U },
        outOfReach: [{ dir: dataDir, blocked: parent }],
      });
      const image = join(parent, "image");
      expect(chooseIdentity({ ...inputs(open), imageDirs: [image, open] })).toEqual({
        identity: { kind: "uid", uid: U },
        outOfReach: [{ dir: image, blocked: parent }],
      });
    } finally {
      rmSync(parent, { recursive: true, force: true });
      rmSync(open, { recursive: true, force: true });
    }
  });

  it("is root, saying why, when nothing can bind a directory out of its reach where it reaches it", () => {
    const parent = mkdtempSync(join(tmpdir(), "sandbox-closed-"));
    chmodSync(parent, 0o700);
    try {
      const dataDir = join(parent, "data");
      const noTools = chooseIdentity({ ...inputs(dataDir), canBind: false });
      expect(noTools.identity).toEqual({ kind: "root" });
      expect(noTools.fallback).toMatch(
        new RegExp(
          `uid ${U} \\(SANDBOX_HOST_UID\\) cannot search ${parent}, on the way to ${dataDir}, and util-linux unshare and mount`,
        ),
      );
      const closedTemp = chooseIdentity({ ...inputs(dataDir), mountParent: join(parent, "tmp") });
      expect(closedTemp.identity).toEqual({ kind: "root" });
      expect(closedTemp.fallback).toContain(`cannot search the temp directory ${join(parent, "tmp")} either`);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!bwrap.available)(`how root starts bwrap as the sandboxes' host user${bwrap.reason}`, () => {
  const tools = { nsenter: "/usr/bin/nsenter", unshare: "/usr/bin/unshare", setpriv: "/usr/bin/setpriv" };

  it("switches user in the spawn itself, through setpriv after binds made as root or where only root reaches bwrap", () => {
    const identity = { kind: "uid", uid: U } as const;
    const real = runnableByAnyone("/usr/bin/bwrap");
    expect(real).toBeDefined();
    expect(bwrapLauncher(tools, "/usr/bin/bwrap", identity, { runnableByAnyone: real })).toEqual({
      argv: [real],
      user: { uid: U, gid: U },
    });
    const viaSetpriv = {
      argv: ["/usr/bin/setpriv", `--reuid=${U}`, `--regid=${U}`, "--clear-groups", "--", "/usr/bin/bwrap"],
    };
    expect(bwrapLauncher(tools, "/usr/bin/bwrap", identity, { runnableByAnyone: real, viaSetpriv: true })).toEqual(
      viaSetpriv,
    );
    expect(bwrapLauncher(tools, "/usr/bin/bwrap", identity)).toEqual(viaSetpriv);
    expect(bwrapLauncher(tools, "/usr/bin/bwrap", { kind: "root" })).toEqual({ argv: ["/usr/bin/bwrap"] });
  });

  it("finds bwrap runnable by anyone through a symlink, not in a directory of root's alone", () => {
    const dir = mkdtempSync(join(tmpdir(), "tools-"));
    try {
      writeFileSync(join(dir, "tool"), "#!/bin/sh\n");
      chmodSync(join(dir, "tool"), 0o755);
      symlinkSync("/usr/bin/bwrap", join(dir, "bwrap"));
      chmodSync(dir, 0o700);
      expect(runnableByAnyone(join(dir, "bwrap"))).toBe(realpathSync("/usr/bin/bwrap"));
      expect(runnableByAnyone(join(dir, "tool"))).toBeUndefined();
      chmodSync(dir, 0o711);
      expect(runnableByAnyone(join(dir, "tool"))).toBe(join(realpathSync(dir), "tool"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
