// The chart README's recipe for the keys Secret, run as written up to kubectl, which only prints
// the Secret (--dry-run=client needs no cluster): the services must accept what it holds.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importInternalKeys } from "@agentplane/service-kit";
import { afterAll, describe, expect, it } from "vitest";
import {
  EgressCredentialKeySchema,
  egressCredentialKeyFrom,
} from "../../apps/sandbox-svc/src/driver/kubernetes/egress-credential.ts";
import { egressPairWorks } from "./egress-pair.ts";
import { CHART } from "./helm.ts";

const KUBECTL = ["/usr/bin/kubectl", "/usr/local/bin/kubectl"].find((p) => existsSync(p));
const README = readFileSync(join(CHART, "README.md"), "utf8");
const ROOT = join(CHART, "../../..");

/** The shell block right after a marker (`keys-secret`, `egress-key-upgrade`, `egress-identity-upgrade`). */
function recipe(marker = "keys-secret"): string {
  const at = README.indexOf(`<!-- ${marker}:`);
  if (at < 0) throw new Error(`the chart README has no ${marker} recipe`);
  const block = /```sh\n([\s\S]*?)```/.exec(README.slice(at));
  if (!block?.[1]) throw new Error("no sh block after the keys-secret marker");
  return block[1];
}

/**
 * Runs a README recipe in `dir` with a kubectl stand-in that answers `cases` (sh `case` arms) and
 * records the body of `patch secret agentplane-keys`; anything else is a mistake of the recipe.
 * Answers the patch it recorded.
 */
function runPatchRecipe(dir: string, marker: string, cases = ""): { stringData: Record<string, string> } {
  const bin = join(dir, "bin");
  mkdirSync(bin);
  writeFileSync(
    join(bin, "kubectl"),
    `#!/bin/sh
case " $* " in
${cases}  *" patch secret agentplane-keys -p "*) for a; do last="$a"; done; printf %s "$last" > patched.json ;;
  *) echo "unexpected kubectl $*" >&2; exit 1 ;;
esac
`,
    { mode: 0o755 },
  );
  execFileSync("bash", ["-euo", "pipefail", "-c", recipe(marker)], {
    cwd: dir,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return JSON.parse(readFileSync(join(dir, "patched.json"), "utf8")) as { stringData: Record<string, string> };
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
    // The egress proxy's own key, as its start reads it.
    expect(EgressCredentialKeySchema.safeParse(value("SANDBOX_EGRESS_CREDENTIAL_KEY")).success).toBe(true);
    expect(value("SANDBOX_EGRESS_CREDENTIAL_KEY")).not.toBe(value("AGENTPLANE_SECRET_KEY"));
    // The egress proxy's identity pair, as its start and governance's read them (decision 0062).
    expect(await egressPairWorks(value("EGRESS_IDENTITY_PRIVATE_KEY"), value("EGRESS_IDENTITY_PUBLIC_KEY"))).toBe(true);
  }, 60_000);
});

describe("the chart README's egress key recipe for an existing keys Secret", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentplane-egress-key-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("adds the key sandbox-svc derived from AGENTPLANE_SECRET_KEY", () => {
    const master = randomBytes(32).toString("base64");
    // kubectl as a stand-in: `get … -o jsonpath` answers the Secret's value, `patch` records its body.
    const patch = runPatchRecipe(
      dir,
      "egress-key-upgrade",
      `  *" get secret agentplane-keys "*"{.data.AGENTPLANE_SECRET_KEY}"*) printf %s '${Buffer.from(master).toString("base64")}' ;;\n`,
    );
    expect(patch).toEqual({ stringData: { SANDBOX_EGRESS_CREDENTIAL_KEY: egressCredentialKeyFrom(master) } });
    expect(existsSync(join(dir, ".egress.key"))).toBe(false);
  });
});

describe("the chart README's egress identity recipe for an existing keys Secret", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentplane-egress-identity-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("adds a new egress identity pair and nothing else", async () => {
    symlinkSync(join(ROOT, "scripts"), join(dir, "scripts"));
    const patch = runPatchRecipe(dir, "egress-identity-upgrade");
    expect(Object.keys(patch.stringData).sort()).toEqual(["EGRESS_IDENTITY_PRIVATE_KEY", "EGRESS_IDENTITY_PUBLIC_KEY"]);
    const { EGRESS_IDENTITY_PRIVATE_KEY: privateJwk, EGRESS_IDENTITY_PUBLIC_KEY: publicJwk } = patch.stringData;
    expect(await egressPairWorks(privateJwk as string, publicJwk as string)).toBe(true);
    expect(existsSync(join(dir, ".egress.env"))).toBe(false);
  }, 60_000);
});
