import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildChildEnv, buildChildNodeFlags, runBuildChild, underBuildLock } from "../src/build-child.ts";

const dir = mkdtempSync(join(tmpdir(), "build-child-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a build child's flags and environment", () => {
  it("keeps memory and module flags and drops what runs this process, debuggers and watchers", () => {
    const flags = buildChildNodeFlags([
      "--max-semi-space-size=2",
      "-r",
      "./preload.cjs",
      "--conditions=development",
      "--input-type=module",
      "-e",
      "console.log(1)",
      "--inspect=9229",
      "--inspect-port",
      "9230",
      "--watch",
      "--test",
      "-i",
    ]);
    expect(flags).toEqual(["--max-semi-space-size=2", "-r", "./preload.cjs", "--conditions=development"]);
  });

  it("passes PATH and HOME only, and always builds for production", () => {
    const env = buildChildEnv({
      PATH: "/usr/bin",
      HOME: "/home/a",
      NODE_ENV: "test",
      AGENTPLANE_SECRET_KEY: "k",
      ANTHROPIC_API_KEY: "sk",
    });
    expect(env).toEqual({ NODE_ENV: "production", PATH: "/usr/bin", HOME: "/home/a" });
  });

  it("runs the script, hands over each printed line, and reports the exit code", async () => {
    const script = join(dir, "child.mjs");
    writeFileSync(
      script,
      'console.log("one\\n\\ntwo  "); console.error(process.env.NODE_ENV, process.env.AGENTPLANE_SECRET_KEY ?? "none"); process.exitCode = 3;',
    );
    process.env.AGENTPLANE_SECRET_KEY = "must-not-reach-the-child";
    const lines: [string, string][] = [];
    try {
      const exit = await runBuildChild(script, dir, (text, stream) => lines.push([stream, text]));
      expect(exit).toEqual({ code: 3, signal: null });
    } finally {
      delete process.env.AGENTPLANE_SECRET_KEY;
    }
    expect(lines).toEqual([
      ["stdout", "one"],
      ["stdout", "two"],
      ["stderr", "production none"],
    ]);
  });
});

describe("one build at a time", () => {
  it("builds once when several callers ask together; the others use its result", async () => {
    const lock = join(dir, "lock-a");
    const stamp = join(dir, "built-a");
    let builds = 0;
    const build = async () => {
      builds++;
      await new Promise((r) => setTimeout(r, 300));
      writeFileSync(stamp, "x");
      return "built";
    };
    const results = await Promise.all([1, 2, 3].map(() => underBuildLock(lock, () => existsSync(stamp), build)));
    expect(builds).toBe(1);
    expect(results.sort()).toEqual(["built", undefined, undefined].sort());
    expect(existsSync(lock)).toBe(false);
  });

  it("takes over a lock left by a process that died while building", async () => {
    const lock = join(dir, "lock-b");
    mkdirSync(lock);
    const old = new Date(Date.now() - 10 * 60_000);
    utimesSync(lock, old, old);
    expect(
      await underBuildLock(
        lock,
        () => false,
        async () => "built",
      ),
    ).toBe("built");
    expect(existsSync(lock)).toBe(false);
  });

  it("releases the lock when the build fails", async () => {
    const lock = join(dir, "lock-c");
    await expect(
      underBuildLock(
        lock,
        () => false,
        async () => {
          throw new Error("vite failed");
        },
      ),
    ).rejects.toThrow("vite failed");
    expect(existsSync(lock)).toBe(false);
  });
});
