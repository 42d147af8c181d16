import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const BOOTSTRAP = fileURLToPath(new URL("../../scripts/bootstrap.mjs", import.meta.url));

describe("scripts/bootstrap.mjs provisioning on a first run", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentplane-bootstrap-out-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps npm's report off stdout, which belongs to the job (`npm run -s cli -- … --json | jq`)", () => {
    // An npm that reports on stdout as the real one does and lays out a pnpm that must not run.
    const bin = join(dir, "bin");
    mkdirSync(bin);
    const npm = join(bin, "npm");
    writeFileSync(
      npm,
      `#!/bin/sh
prefix=""; while [ $# -gt 0 ]; do [ "$1" = "--prefix" ] && prefix="$2"; shift; done
mkdir -p "$prefix/node_modules/pnpm/bin"
printf 'process.exit(1);\\n' > "$prefix/node_modules/pnpm/bin/pnpm.cjs"
echo; echo "added 1 package in 1s"
`,
    );
    chmodSync(npm, 0o755);
    const job = spawnSync(process.execPath, [BOOTSTRAP, "node", "-e", "process.stdout.write('{\"ok\":true}')"], {
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, XDG_CACHE_HOME: join(dir, "cache") },
      encoding: "utf8",
    });
    expect(job.stderr).toContain("provisioning pnpm");
    expect(job.stderr).toContain("added 1 package");
    expect(job.stdout).toBe('{"ok":true}');
    expect(job.status).toBe(0);
  }, 60_000);
});
