// The all-in-one configuration every bench server starts from: a fresh data dir, a bootstrap
// owner token, no rate limit, no agent runtime, no logs. `extra` adds or overrides variables.
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AllInOneEnvSchema } from "../../apps/platform/src/config.ts";

export function benchPlatformEnv(name: string, extra: Record<string, string | undefined> = {}) {
  const owner = `boot_${randomBytes(24).toString("hex")}`;
  const dataDir = mkdtempSync(join(tmpdir(), `agentplane-bench-${name}-`));
  // Searchable, as a service's data dir usually is: a root service then runs its sandboxes as
  // their own host user (the production default), not as root.
  chmodSync(dataDir, 0o711);
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
