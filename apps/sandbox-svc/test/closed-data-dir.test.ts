import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DEFAULT_SANDBOX_HOST_UID } from "../src/driver/local/host-user.ts";
import { LocalDriver } from "../src/driver/local/local-driver.ts";
import { holdsSysAdmin, parentPid } from "../src/driver/local/namespaces.ts";
import { find } from "../src/driver/local/process.ts";
import type { SandboxRuntimeSpec } from "../src/driver/types.ts";
import { runCommand } from "../src/exec/run-command.ts";
import { FakeProxy } from "./egress-fixture.ts";
import { buildTinyRootfs, requireBwrap } from "./helpers.ts";

const bwrap = requireBwrap();
const U = DEFAULT_SANDBOX_HOST_UID;
const spec = (id: string, extra: Partial<SandboxRuntimeSpec> = {}): SandboxRuntimeSpec => ({
  id,
  slug: id.replace(/_/g, "-"),
  image: "default",
  env: {},
  resources: { maxProcesses: 64 },
  ...extra,
});

/** Host pids whose command line is `command`. */
function hostPids(command: string): number[] {
  return readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
      return cmdline === command ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}

/**
 * The directory a start bound the sandbox's workspace into, from the mounts of the bwrap holding its
 * namespaces (the parent of the parent of its first process): on the host it shows no mounts.
 */
function boundDir(firstProcess: number): string | undefined {
  const mountinfo = readFileSync(`/proc/${parentPid(parentPid(firstProcess))}/mountinfo`, "utf8");
  return /\s(\S*agentplane-sandbox-mounts-[^/\s]+)\/workspace\s/.exec(mountinfo)?.[1];
}

const hostUids = (pid: number) =>
  (/^Uid:\s*(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "").split(/\s+/).map(Number);

// A root service whose data dir (and an image) sit under a directory only root may search: a dev
// container's repository in /root. Its sandboxes stay their own host user's, not root's.
describe.skipIf(!bwrap.available || !holdsSysAdmin())(
  `a data dir under a directory closed to others${bwrap.reason}`,
  () => {
    let parent: string;
    let dataDir: string;
    let driver: LocalDriver;
    const lines: { level: number; msg: string }[] = [];
    const proxy = new FakeProxy();
    const sh = (id: string, script: string) =>
      runCommand(driver, id, { argv: ["/bin/sh", "-c", script], timeoutMs: 10_000 });

    beforeAll(async () => {
      parent = mkdtempSync(join(tmpdir(), "sandbox-closed-"));
      chmodSync(parent, 0o700);
      dataDir = join(parent, "data");
      // A workspace from before sandboxes had a host user of their own: root's, with root's file.
      mkdirSync(join(dataDir, "workspaces", "sbx_old"), { recursive: true });
      writeFileSync(join(dataDir, "workspaces", "sbx_old", "notes.txt"), "old\n");
      const logger = createLogger("test", "info", { write: (line) => lines.push(JSON.parse(line)) });
      const images = { tiny: buildTinyRootfs(join(parent, "tiny")) };
      driver = new LocalDriver({ dataDir, logger, images, egress: proxy });
      await driver.start(spec("sbx_closed"));
    });
    afterAll(async () => {
      await driver?.close();
      await proxy.closeAll();
      rmSync(parent, { recursive: true, force: true });
    });

    it("runs every process of the sandbox as its host user, with no fallback to root", async () => {
      expect(driver.describe()).toMatchObject({
        sandboxHostUser: `uid ${U}`,
        sandboxDirsBound: expect.stringContaining(`cannot search ${parent}`),
      });
      expect(driver.describe()).not.toHaveProperty("sandboxHostUserFallback");
      expect(lines.filter((l) => l.level >= 40)).toEqual([]);
      expect(lines).toContainEqual(
        expect.objectContaining({ msg: expect.stringContaining("private mount namespace") }),
      );
      const r = await sh("sbx_closed", "id -u; sleep 31 & grep CapEff /proc/self/status");
      expect(r).toMatchObject({ exitCode: 0, stdout: "1000\nCapEff:\t0000000000000000\n" });
      const processes = [...hostPids("sleep 31"), ...hostPids("sleep infinity")];
      expect(processes.length).toBeGreaterThanOrEqual(2);
      for (const pid of processes) expect(hostUids(pid)).toEqual([U, U, U, U]);
    });

    it("has a workspace of that user's, where what it leaves is that user's and root's files stay closed", async () => {
      const workspace = driver.workspaceDir("sbx_closed");
      writeFileSync(join(workspace, "root-only"), "secret\n", { mode: 0o600 });
      const r = await sh("sbx_closed", "cp /bin/sh s && chmod 4755 s && echo made; cat root-only || echo refused");
      expect(r.stdout).toBe("made\nrefused\n");
      expect(statSync(join(workspace, "s"))).toMatchObject({ uid: U, gid: U });
      expect(statSync(workspace)).toMatchObject({ uid: U });
      // Nothing moved, no mode opened: the directory in the way is still root's alone.
      expect((statSync(parent).mode & 0o777).toString(8)).toBe("700");
    });

    it("reaches the egress proxy through its relay, and forwarded ports", async (ctx) => {
      const relay = await runCommand(driver, "sbx_closed", {
        argv: ["/bin/bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/3128 && cat <&3"],
        timeoutMs: 10_000,
      });
      expect(relay.stdout).toBe("proxied\n");
      if (!existsSync("/usr/bin/python3")) ctx.skip();
      // A listener inside that answers once: the forward enters the sandbox's network namespace only.
      const server =
        "import socket; s=socket.socket(); s.bind(('127.0.0.1', 8000)); s.listen(); c, _ = s.accept(); c.sendall(b'inside\\n'); c.close()";
      const listen = runCommand(driver, "sbx_closed", { argv: ["python3", "-c", server], timeoutMs: 10_000 });
      let answer = "";
      for (let attempt = 0; attempt < 50 && answer === ""; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const stream = await driver.portForward("sbx_closed", 8000);
        answer = await new Promise<string>((resolve) => {
          let text = "";
          stream.on("data", (chunk: Buffer) => {
            text += chunk.toString("utf8");
          });
          stream.on("close", () => resolve(text));
          stream.on("error", () => resolve(text));
          stream.end();
        });
      }
      expect(answer).toBe("inside\n");
      await listen;
    });

    it("takes over a workspace root made before, with what is in it", async () => {
      await driver.start(spec("sbx_old"));
      const r = await sh("sbx_old", "echo more >> notes.txt && cat notes.txt");
      expect(r).toMatchObject({ exitCode: 0, stdout: "old\nmore\n" });
      expect(statSync(join(dataDir, "workspaces", "sbx_old", "notes.txt"))).toMatchObject({ uid: U, gid: U });
    });

    it("runs a registered image from a directory out of the user's reach", async () => {
      await driver.start(spec("sbx_tiny", { image: "tiny" }));
      const r = await sh("sbx_tiny", "cat /etc/os-release; ls /bin; echo x > /workspace/f && cat /workspace/f");
      expect(r.stdout).toContain("ID=tiny");
      expect(r.stdout.split("\n")).toEqual(expect.arrayContaining(["cat", "ls", "sh", "sleep", "x"]));
      expect(statSync(join(driver.workspaceDir("sbx_tiny"), "f")).uid).toBe(U);
      // bwrap's command line (pid 1's) names neither the bound directories nor their host sources.
      const pid1 = await sh("sbx_tiny", "cat /proc/1/cmdline");
      expect(pid1.stdout).toMatch(/bwrap/);
      expect(pid1.stdout).not.toContain(parent);
      expect(pid1.stdout).not.toContain("agentplane-sandbox-mounts-");
    });

    it("puts the sandbox's processes in its cgroups, where the host lets us", async (ctx) => {
      if (!driver.cgroups.controllers.includes("pids")) ctx.skip();
      await driver.start(spec("sbx_limited", { resources: { maxProcesses: 16 } }));
      const r = await sh(
        "sbx_limited",
        "i=0; while [ $i -lt 40 ]; do sleep 30 & i=$((i+1)); done 2>/dev/null; ls /proc | grep -c '^[0-9]'",
      );
      expect(Number(r.stdout.trim())).toBeLessThanOrEqual(16);
    });

    it("binds in the start's own mount namespace only, and stops, removes and closes as before", async () => {
      // One of this file's sandboxes (others' run `sleep infinity` as that user too, bound nowhere).
      const ours = (pid: number) => {
        try {
          return hostUids(pid)[0] === U && boundDir(pid) !== undefined;
        } catch {
          return false;
        }
      };
      // Read from /proc while other files' sandboxes come and go: looked for until one is found.
      const main = await vi.waitFor(
        () => {
          const [found] = hostPids("sleep infinity").filter(ours);
          expect(found).toBeDefined();
          return found as number;
        },
        { timeout: 5_000, interval: 50 },
      );
      const bound = boundDir(main);
      expect(bound).toBeDefined();
      expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain("agentplane-sandbox-mounts-");
      expect(readdirSync(bound as string).sort()).toEqual(["image", "run", "workspace"]);
      // A temp directory cleaner removes the mount points (empty on the host): the next start makes them again.
      const clean = (dir: string) => {
        for (const name of ["image", "run", "workspace"]) rmdirSync(join(dir, name));
      };
      clean(bound as string);
      await driver.start(spec("sbx_again"));
      expect((await sh("sbx_again", "echo again > f && cat f")).stdout).toBe("again\n");
      // And the directory that held them: the next start makes a new one.
      clean(bound as string);
      rmdirSync(bound as string);
      await driver.start(spec("sbx_anew", { command: ["sleep", "4343"] }));
      expect((await sh("sbx_anew", "id -u")).stdout).toBe("1000\n");
      const [anew] = hostPids("sleep 4343");
      const rebound = boundDir(anew as number);
      expect(rebound).toBeDefined();
      expect(rebound).not.toBe(bound);
      await driver.stop("sbx_old");
      expect(await driver.status("sbx_old")).toEqual({ phase: "stopped" });
      await driver.removeWorkspace("sbx_old");
      expect(existsSync(driver.workspaceDir("sbx_old"))).toBe(false);
      expect(existsSync(join(dataDir, "run", "sbx_old"))).toBe(false);
      await driver.close();
      expect(existsSync(rebound as string)).toBe(false);
    });
  },
);

describe.skipIf(!bwrap.available || !holdsSysAdmin())(
  `the binds of a start and the sandbox's environment${bwrap.reason}`,
  () => {
    it("keeps libmount's variables of a sandbox's spec from the host's mount, yet passes them in", async () => {
      const SEARCH = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];
      const parent = mkdtempSync(join(tmpdir(), "sandbox-closed-"));
      chmodSync(parent, 0o700);
      // The host's tools, with a `mount` that records the environment it was given.
      const tools = mkdtempSync(join(tmpdir(), "sandbox-mount-tools-"));
      for (const tool of ["bwrap", "nsenter", "unshare", "setpriv"]) {
        const path = find(tool, SEARCH);
        if (path) symlinkSync(path, join(tools, tool));
      }
      const seen = join(tools, "mount-env");
      writeFileSync(join(tools, "mount"), `#!/bin/sh\nenv >> ${seen}\nexec ${find("mount", SEARCH)} "$@"\n`);
      chmodSync(join(tools, "mount"), 0o755);
      const driver = new LocalDriver({ dataDir: join(parent, "data"), logger: silentLogger(), searchPath: [tools] });
      try {
        await driver.start(spec("sbx_env", { env: { LIBMOUNT_DEBUG: "all", LIBMOUNT_MTAB: "/workspace/mtab" } }));
        const r = await runCommand(driver, "sbx_env", {
          argv: ["/bin/sh", "-c", 'printf "%s|%s" "$LIBMOUNT_DEBUG" "$LIBMOUNT_MTAB"'],
          timeoutMs: 10_000,
        });
        expect(r.stdout).toBe("all|/workspace/mtab");
        const env = readFileSync(seen, "utf8");
        expect(env).toContain("HOSTNAME=sbx-env");
        expect(env).not.toContain("LIBMOUNT_");
      } finally {
        await driver.close();
        rmSync(parent, { recursive: true, force: true });
        rmSync(tools, { recursive: true, force: true });
      }
    });
  },
);
