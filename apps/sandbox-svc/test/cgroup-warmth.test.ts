import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CgroupWarmth, ownProcsFile } from "../src/driver/local/cgroup-warmth.ts";

const writesIn = (file: string) => readFileSync(file, "utf8").split("\n").filter(Boolean);

describe("keeping cgroup moves quick", () => {
  let warmth: CgroupWarmth | undefined;
  afterEach(() => warmth?.close());

  it("writes its own pid while held, and stops once released and lingered", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "warmth-")), "cgroup.procs");
    writeFileSync(file, "");
    warmth = new CgroupWarmth(file, 2);
    expect(writesIn(file)).toHaveLength(0);
    const release = warmth.hold(20);
    await vi.waitFor(() => expect(writesIn(file).length).toBeGreaterThanOrEqual(3), { timeout: 2000, interval: 5 });
    expect(new Set(writesIn(file))).toEqual(new Set([String(process.pid)]));
    release();
    release();
    expect(warmth.held).toBe(true);
    await vi.waitFor(() => expect(warmth?.held).toBe(false), { timeout: 2000, interval: 5 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const settled = writesIn(file).length;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(writesIn(file)).toHaveLength(settled);
  });

  it("writes nothing while nothing holds it, and gives up where the write is refused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warmth-"));
    const missing = join(dir, "no-such-cgroup", "cgroup.procs");
    warmth = new CgroupWarmth(missing, 2);
    const release = warmth.hold();
    await new Promise((resolve) => setTimeout(resolve, 30));
    release();
    // Refused once: not tried again, whatever holds it later.
    expect(warmth.hold()).toBeTypeOf("function");
    expect(warmth.held).toBe(false);
  });

  it("finds this process's own cgroup.procs where the driver uses cgroups, and none where it does not", () => {
    const own = readFileSync("/proc/self/cgroup", "utf8");
    const pidsPath = own
      .split("\n")
      .find((l) => l.split(":")[1]?.split(",").includes("pids"))
      ?.split(":")[2];
    const v1 = ownProcsFile({ version: "v1", controllers: ["pids"], parents: {} }, "/cg");
    if (pidsPath !== undefined) expect(v1).toBe(join("/cg/pids", pidsPath, "cgroup.procs"));
    expect(ownProcsFile({ version: "none", controllers: [], parents: {} }, "/cg")).toBeUndefined();
  });
});
