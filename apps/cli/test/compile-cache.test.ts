import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..", "..", "..");

/** Every file under `dir`, recursively. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
}

describe("Node's compile cache", () => {
  const homes: string[] = [];
  afterAll(() => {
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });

  function home(): string {
    const dir = mkdtempSync(join(tmpdir(), "compile-cache-home-"));
    homes.push(dir);
    return dir;
  }
  const env = (home: string) => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home });

  it.each([
    ["the CLI", ["apps/cli/bin/agentplane.mjs", "--help"]],
    ["the platform launcher", ["apps/platform/src/main.ts", "keys"]],
  ])(
    "%s keeps it in the user's own cache directory, not one path in /tmp for every user",
    async (_, argv) => {
      const dir = home();
      await run(process.execPath, argv, { cwd: root, env: env(dir), timeout: 60_000 });
      const cache = join(dir, ".cache", "agentplane", "compile-cache");
      expect(statSync(cache).mode & 0o777).toBe(0o700);
      expect(files(cache).length).toBeGreaterThan(0);
    },
    90_000,
  );
});
