// The guides under docs/guides/ run as written: every `sh` block of a guide, in order, in one bash
// with `set -euo pipefail`, against a freshly started all-in-one platform. A body that the API
// refuses, a field that was renamed or an expectation (`jq -e`) that no longer holds fails here.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, REPO_ROOT, type Spawned, spawnNode } from "./processes.ts";

const GUIDES = join(REPO_ROOT, "docs", "guides");
const OWNER_TOKEN = `guide-owner-${"x".repeat(32)}`;

/** The `sh` blocks of a Markdown file, joined in order (other fences, e.g. `console`, are prose). */
export function shellOf(markdown: string): string {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]).join("\n");
}

const hasTools = ["curl", "jq"].every((tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0);
if (!hasTools && process.env.CI === "true") throw new Error("curl and jq are required in CI but not installed");

describe.skipIf(!hasTools)(
  `docs/guides run as written${hasTools ? "" : " (skipped: curl or jq not installed)"}`,
  () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agentplane-guides-"));
    const workDir = mkdtempSync(join(tmpdir(), "agentplane-guides-work-"));
    let platform: Spawned | undefined;
    let base = "";

    beforeAll(async () => {
      const port = await freePort();
      platform = spawnNode("apps/platform/src/main.ts", [], {
        PORT: String(port),
        AGENTPLANE_DATA_DIR: dataDir,
        AGENT_RUNTIME: "off",
        AGENTPLANE_BOOTSTRAP_TOKEN: OWNER_TOKEN,
      });
      await platform.waitFor(/Health\s+http:\/\/\S+\/health/, 120_000);
      base = `http://127.0.0.1:${port}`;
    }, 150_000);

    afterAll(async () => {
      await platform?.stop();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(workDir, { recursive: true, force: true });
    });

    const guides = readdirSync(GUIDES).filter((f) => f.endsWith(".md"));

    it("has guides, each with shell blocks to run", () => {
      expect(guides.length).toBeGreaterThanOrEqual(5);
      for (const guide of guides) expect(shellOf(readFileSync(join(GUIDES, guide), "utf8")), guide).not.toBe("");
    });

    it.each(guides)("%s runs to the end against the platform", (guide) => {
      const script = shellOf(readFileSync(join(GUIDES, guide), "utf8"));
      const run = spawnSync("bash", ["-euo", "pipefail", "-c", script], {
        cwd: workDir,
        env: { ...process.env, BASE: base, T: OWNER_TOKEN },
        encoding: "utf8",
        timeout: 90_000,
      });
      expect(run.status, `${guide} failed:\n${run.stdout}\n${run.stderr}`).toBe(0);
    });
  },
);
