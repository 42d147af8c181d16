// The chart README's recipe for the keys Secret, run as written up to kubectl, which only prints
// the Secret (--dry-run=client needs no cluster): the services must accept what it holds.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importInternalKeys } from "@agentplane/service-kit";
import { afterAll, describe, expect, it } from "vitest";
import { CHART } from "./helm.ts";

const KUBECTL = ["/usr/bin/kubectl", "/usr/local/bin/kubectl"].find((p) => existsSync(p));
const README = readFileSync(join(CHART, "README.md"), "utf8");
const ROOT = join(CHART, "../../..");

/** The shell block right after the keys-secret marker. */
function recipe(): string {
  const at = README.indexOf("<!-- keys-secret:");
  if (at < 0) throw new Error("the chart README has no keys-secret recipe");
  const block = /```sh\n([\s\S]*?)```/.exec(README.slice(at));
  if (!block?.[1]) throw new Error("no sh block after the keys-secret marker");
  return block[1];
}

describe.skipIf(!KUBECTL)("the chart README's keys Secret recipe", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentplane-keys-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("creates a Secret whose keys the services accept", async () => {
    // Run from a directory whose `scripts` links to the repository's: the keys file stays out of it.
    symlinkSync(join(ROOT, "scripts"), join(dir, "scripts"));
    const script = `${recipe().trimEnd()} --dry-run=client -o json\n`;
    const out = execFileSync("bash", ["-euc", script], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, PATH: `${join(KUBECTL as string, "..")}:${process.env.PATH ?? ""}` },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const secret = JSON.parse(out) as { metadata: { name: string; namespace: string }; data: Record<string, string> };
    expect(secret.metadata).toMatchObject({ name: "agentplane-keys", namespace: "agentplane" });
    const value = (key: string) => Buffer.from(secret.data[key] ?? "", "base64").toString("utf8");
    // What every service does with them at start (no quotes left from the env file).
    await expect(importInternalKeys({ privateJwk: value("INTERNAL_IDENTITY_PRIVATE_KEY") })).resolves.toBeDefined();
    expect(Buffer.from(value("AGENTPLANE_SECRET_KEY"), "base64")).toHaveLength(32);
    expect(value("AGENTPLANE_SECRET_KEY")).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  }, 60_000);
});
