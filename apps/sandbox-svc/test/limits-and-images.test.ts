import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "@agentplane/db";
import { ProblemError } from "@agentplane/problem-details";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { LocalDriver } from "../src/driver/local/local-driver.ts";
import { runCommand } from "../src/exec/run-command.ts";
import { createSandbox } from "../src/services/create.ts";
import { execInSandbox } from "../src/services/exec.ts";
import { buildTinyRootfs, newDriver, requireBwrap, tempDataDir } from "./helpers.ts";
import { type VerbFixture, verbFixture } from "./service-fixture.ts";

const bwrap = requireBwrap();

/** Holds `bytes` in memory at once: `tail -n 1` keeps a newline-free stream whole, then `wc` counts it. */
const hog = (bytes: number) => `head -c ${bytes} /dev/zero | tail -n 1 | wc -c`;

const sh = (driver: LocalDriver, id: string, command: string) =>
  runCommand(driver, id, { argv: ["/bin/sh", "-c", command], timeoutMs: 20_000 });

describe.skipIf(!bwrap.available)(`memory limits${bwrap.reason}`, () => {
  let driver: LocalDriver;
  beforeAll(() => {
    driver = newDriver();
  });
  afterAll(async () => {
    await driver.close();
  });

  it("kills a process that allocates beyond the sandbox's memory limit, where the host lets us set one", async (ctx) => {
    // Said in the test name when skipped: only hosts with a writable memory cgroup enforce it.
    if (!driver.cgroups.controllers.includes("memory")) ctx.skip();
    await driver.start({ id: "sbx_mem", slug: "mem", image: "default", env: {}, resources: { memoryMiB: 48 } });
    // Seen from the host: the sandbox's own memory cgroup carries the limit and holds its processes.
    const dir = join(driver.cgroups.parents.memory as string, "sbx_mem");
    const limitFile = driver.cgroups.version === "v2" ? "memory.max" : "memory.limit_in_bytes";
    expect(Number(readFileSync(join(dir, limitFile), "utf8"))).toBe(48 * 1024 * 1024);
    expect(readFileSync(join(dir, "cgroup.procs"), "utf8").trim()).not.toBe("");

    // `tail -n 1` must hold a newline-free stream whole: a memory hog made of coreutils only.
    const small = await sh(driver, "sbx_mem", hog(8 << 20));
    expect(small).toMatchObject({ exitCode: 0, stdout: `${8 << 20}\n` });
    const big = await sh(driver, "sbx_mem", `${hog(256 << 20)}; echo exit=$?`);
    expect(big.stdout).not.toContain(String(256 << 20));
    // SIGKILL from the kernel's OOM killer, scoped to the sandbox's cgroup: the pipeline's last
    // command (wc) sees a truncated stream, and the shell reports the killed tail.
    expect(big.stdout).toMatch(/exit=0\n$/);
    expect(Number(big.stdout.split("\n")[0])).toBeLessThan(256 << 20);
    expect(big.stderr).toContain("Killed");

    // The sandbox itself survives its process being killed.
    expect((await sh(driver, "sbx_mem", "echo alive")).stdout).toBe("alive\n");
    await driver.stop("sbx_mem");
  });

  it("restarts a sandbox with limits back to back, each start in a cgroup of its own", async (ctx) => {
    if (driver.cgroups.controllers.length === 0) ctx.skip();
    const resources = { memoryMiB: 256, maxProcesses: 256, cpuMillicores: 1000 };
    for (let round = 0; round < 8; round++) {
      await driver.start({ id: "sbx_again", slug: "again", image: "default", env: {}, resources });
      // The stop's cgroup removal must be finished, not still retrying, when the next start
      // creates the same directories: a late removal took the new cgroup away before its first
      // process moved in ("cgroup.procs: Directory nonexistent").
      expect((await sh(driver, "sbx_again", "echo round")).stdout).toBe("round\n");
      await driver.stop("sbx_again");
    }
  });

  it("holds a sandbox without limits to the default memory and process limits only", async () => {
    await driver.start({ id: "sbx_free", slug: "free", image: "default", env: {}, resources: {} });
    const big = await sh(driver, "sbx_free", hog(256 << 20));
    expect(big).toMatchObject({ exitCode: 0, stdout: `${256 << 20}\n` });
    // Without them a fork bomb in any sandbox that sets none would exhaust the host's processes.
    const { pids, memory } = driver.cgroups.parents;
    if (pids) {
      expect(readFileSync(join(pids, "sbx_free", "pids.max"), "utf8").trim()).toBe("1024");
      expect(readFileSync(join(pids, "sbx_free", "cgroup.procs"), "utf8").trim()).not.toBe("");
    }
    if (memory) {
      const limitFile = driver.cgroups.version === "v2" ? "memory.max" : "memory.limit_in_bytes";
      expect(Number(readFileSync(join(memory, "sbx_free", limitFile), "utf8"))).toBe(2048 * 1024 * 1024);
    }
    expect(driver.unenforcedLimits({})).toBeUndefined();
    await driver.stop("sbx_free");
  });

  it("has bwrap and the sandbox's command in its cgroups, moved in while bwrap builds it", async (ctx) => {
    if (driver.cgroups.controllers.length === 0) ctx.skip();
    await driver.start({ id: "sbx_moved", slug: "moved", image: "default", env: {}, resources: {} });
    // The start answers once bwrap's processes are in; the command runs once told to, after.
    expect(await sh(driver, "sbx_moved", "true")).toMatchObject({ exitCode: 0 });
    const { pids: pidsParent, memory } = driver.cgroups.parents;
    for (const parent of [pidsParent, memory].filter((p) => p !== undefined)) {
      // The main command is in from its first instruction, but on a loaded machine it may not have
      // exec'd `sleep` yet when the exec above answers: what it runs is waited for, not its place.
      await vi.waitFor(
        () => {
          const pids = readFileSync(join(parent, "sbx_moved", "cgroup.procs"), "utf8")
            .trim()
            .split("\n");
          const commands = pids.map((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8"));
          // The bwrap holding the namespaces, its child (the sandbox's pid 1) and the main command.
          expect(commands.filter((c) => c.split("\0")[0]?.endsWith("bwrap"))).toHaveLength(2);
          expect(commands).toContain("sleep\0infinity\0");
        },
        { timeout: 5000, interval: 20 },
      );
    }
    await driver.stop("sbx_moved");
  });
});

describe.skipIf(!bwrap.available)(`registered images${bwrap.reason}`, () => {
  let fx: VerbFixture;
  let rootfs: string;
  beforeAll(async () => {
    rootfs = buildTinyRootfs(join(tempDataDir(), "rootfs"));
    const database = await openDatabase("pglite://memory");
    fx = await verbFixture(database, { driver: { images: { tiny: rootfs } } });
  });
  afterAll(async () => {
    await fx?.close();
  });

  it("runs a sandbox on a registered root filesystem instead of the host's system directories", async () => {
    const row = await createSandbox(fx.deps, fx.actor, {
      projectId: "prj_img",
      name: "tiny",
      image: "tiny",
      labels: {},
      start: true,
    });
    expect(row).toMatchObject({ image: "tiny", state: "running" });
    const run = (command: string) => execInSandbox(fx.deps, fx.actor, { command, timeoutMs: 10_000, sandbox: row });
    expect((await run("cat /etc/os-release")).stdout).toContain("ID=tiny");
    // Nothing of the host's /usr: no python, no node, only the copied binaries.
    const listing = await run("ls /; ls /bin; test -e /usr/bin/python3 || echo no-python");
    expect(listing.stdout).toContain("no-python");
    expect(listing.stdout.split("\n")).toEqual(expect.arrayContaining(["cat", "ls", "sh", "sleep", "workspace"]));
    // The image is read-only; the workspace is not.
    expect((await run("echo x > /etc/os-release")).exitCode).not.toBe(0);
    expect((await run("echo x > /workspace/f && cat /workspace/f")).stdout).toBe("x\n");
    expect(readFileSync(join(rootfs, "etc", "os-release"), "utf8")).toContain("ID=tiny");
  });

  it("refuses an image the catalog does not have with a 400 naming the known ones", async () => {
    const err = await createSandbox(fx.deps, fx.actor, {
      projectId: "prj_img",
      name: "ghost",
      image: "debian",
      labels: {},
      start: false,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProblemError);
    expect((err as ProblemError).status).toBe(400);
    expect((err as ProblemError).detail).toContain("known: default, tiny");
  });

  it("refuses names every object has (constructor, __proto__) as images the catalog does not have", async () => {
    for (const image of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      const err = await createSandbox(fx.deps, fx.actor, {
        projectId: "prj_img",
        name: "proto",
        image,
        labels: {},
        start: false,
      }).catch((e: unknown) => e);
      expect(err, image).toBeInstanceOf(ProblemError);
      expect((err as ProblemError).status, image).toBe(400);
    }
  });
});
