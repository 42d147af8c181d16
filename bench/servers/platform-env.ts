// The all-in-one configuration every bench server starts from: a fresh data dir, a bootstrap
// owner token, no rate limit, no agent runtime, no logs. `extra` adds or overrides variables.
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { AllInOneEnvSchema } from "../../apps/platform/src/config.ts";

export function benchPlatformEnv(name: string, extra: Record<string, string | undefined> = {}) {
  const owner = `boot_${randomBytes(24).toString("hex")}`;
  const dataDir = benchDataDir(`agentplane-bench-${name}-`);
  const env = AllInOneEnvSchema.parse({
    PORT: "0",
    HOST: "127.0.0.1",
    AGENTPLANE_DATA_DIR: dataDir,
    AGENTPLANE_BOOTSTRAP_TOKEN: owner,
    RATE_LIMIT_PER_MINUTE: "100000000",
    AGENT_RUNTIME: "off",
    LOG_LEVEL: "silent",
    ...extra,
  });
  return { owner, dataDir, env };
}

/**
 * A fresh data dir, searchable by others as a service's data dir usually is: a root service then
 * runs its sandboxes as their own host user (the production default), not as root. With
 * `SANDBOX_BENCH_CLOSED_PARENT=1` it sits in a directory only its owner may search (a data dir in
 * /root): sandbox starts then bind their directories in a private mount namespace.
 */
export function benchDataDir(prefix: string): string {
  const closed = process.env.SANDBOX_BENCH_CLOSED_PARENT === "1";
  const parent = closed ? mkdtempSync(join(tmpdir(), "agentplane-bench-closed-")) : tmpdir();
  if (closed) chmodSync(parent, 0o700);
  const dataDir = mkdtempSync(join(parent, prefix));
  chmodSync(dataDir, 0o711);
  return dataDir;
}

/** Removes a data dir `benchDataDir` made, with the closed directory it made for it. */
export function removeBenchDataDir(dataDir: string): void {
  const parent = dirname(dataDir);
  rmSync(basename(parent).startsWith("agentplane-bench-closed-") ? parent : dataDir, { recursive: true, force: true });
}
