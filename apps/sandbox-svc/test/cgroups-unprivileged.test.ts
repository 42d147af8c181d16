import { execFile } from "node:child_process";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const fixture = join(import.meta.dirname, "cgroups-detect-fixture.ts");
const NOBODY = 65534;

/** This process's pids cgroup path, as detection reads it (a child started by setpriv shares it). */
function ownPidsPath(): string {
  for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
    const [, controllers, path] = line.split(":");
    if (controllers?.split(",").includes("pids") && path) return path;
  }
  return "/";
}

describe.skipIf(process.getuid?.() !== 0)("cgroup detection by a user other than root", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function detectAsNobody(root: string): Promise<{ version: string; controllers: string[] }> {
    const bin = mkdtempSync(join(tmpdir(), "cgroups-detect-node-"));
    dirs.push(bin);
    copyFileSync(process.execPath, join(bin, "node"));
    chmodSync(bin, 0o755);
    chmodSync(join(bin, "node"), 0o755);
    const { stdout } = await run(
      "setpriv",
      [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "--", join(bin, "node"), fixture, root],
      { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, timeout: 30_000 },
    );
    return JSON.parse(stdout.trim());
  }

  function leftover(owner: number): string {
    const root = mkdtempSync(join(tmpdir(), "cgroups-detect-"));
    dirs.push(root);
    chmodSync(root, 0o755);
    const mount = join(root, "pids");
    mkdirSync(mount);
    writeFileSync(join(mount, "cgroup.procs"), "");
    const parent = join(mount, ownPidsPath(), "agentplane-sandboxes");
    mkdirSync(parent, { recursive: true, mode: 0o755 });
    writeFileSync(join(parent, "cgroup.procs"), "");
    chownSync(parent, owner, owner);
    return root;
  }

  it("leaves out a parent cgroup that root made and it may not create sandboxes in", async () => {
    const support = await detectAsNobody(leftover(0));
    expect(support.controllers).not.toContain("pids");
    expect(support.version).toBe("none");
  }, 60_000);

  it("uses a parent cgroup it may create sandboxes in", async () => {
    const support = await detectAsNobody(leftover(NOBODY));
    expect(support).toMatchObject({ version: "v1", controllers: ["pids"] });
  }, 60_000);
});
