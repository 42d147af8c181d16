import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MAIN } from "./harness.ts";

/** The system's own Node when it is older than 24 (what `npm link` runs the CLI on), else none. */
function olderNode(): { bin?: string; reason: string } {
  const bin = "/usr/bin/node";
  if (!existsSync(bin)) return { reason: " (skipped: no /usr/bin/node)" };
  const version = execFileSync(bin, ["--version"], { encoding: "utf8" }).trim();
  return Number(version.slice(1).split(".")[0]) < 24
    ? { bin, reason: "" }
    : { reason: ` (skipped: /usr/bin/node is ${version}, not older than 24)` };
}

const older = olderNode();

describe("the installed entry point on an older Node", () => {
  it.skipIf(!older.bin)(`says Node 24 is needed and how to get it, exit 1${older.reason}`, () => {
    const ran = spawnSync(older.bin!, [MAIN, "orgs", "list"], { encoding: "utf8", env: { PATH: "/usr/bin:/bin" } });
    expect(ran.status).toBe(1);
    expect(ran.stdout).toBe("");
    expect(ran.stderr).toMatch(/^error: agentplane needs Node\.js 24 or later \(this is v\d+\.[\d.]+\)/);
    expect(ran.stderr).toContain("npm run -s cli -- <args>");
    expect(ran.stderr).not.toContain("SyntaxError");
  });
});
