import { execFile } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { requireBwrap } from "./helpers.ts";

const bwrap = requireBwrap();
const run = promisify(execFile);
const fixture = join(import.meta.dirname, "unprivileged-driver.ts");
/** A user with no rights to anything of root's (nobody). */
const NOBODY = 65534;

describe.skipIf(!bwrap.available)(`local driver run by a user other than root${bwrap.reason}`, () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("runs commands, forwards ports and relays egress in its sandboxes", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sandbox-unpriv-"));
    dirs.push(dataDir);
    let argv = [process.execPath, fixture, dataDir];
    if (process.getuid?.() === 0) {
      // As root (CI), the service runs as nobody: with a copy of this Node, whose own may sit in
      // root's home, and a data directory of its own.
      const bin = mkdtempSync(join(tmpdir(), "sandbox-unpriv-node-"));
      dirs.push(bin);
      copyFileSync(process.execPath, join(bin, "node"));
      chmodSync(bin, 0o755);
      chmodSync(join(bin, "node"), 0o755);
      chownSync(dataDir, NOBODY, NOBODY);
      argv = [
        "setpriv",
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        "--clear-groups",
        "--",
        join(bin, "node"),
        fixture,
        dataDir,
      ];
    }
    const { stdout } = await run(argv[0] as string, argv.slice(1), {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir },
      timeout: 60_000,
    });
    const result = JSON.parse(stdout.trim().split("\n").at(-1) as string);
    expect(result.uid).not.toBe(0);
    expect(result.error).toBeUndefined();
    // The sandbox's user, with no capabilities, on a read-only system.
    expect(result.exec).toEqual({
      exitCode: 0,
      stdout: "1000\nunpriv\nCapEff:\t0000000000000000\nread-only\n",
      stderr: "",
    });
    expect(result.egress).toMatchObject({ exitCode: 0, stdout: "from the host\n" });
    expect(result.portForward).toBe("inside\n");
  }, 90_000);
});
