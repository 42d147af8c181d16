import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { silentLogger } from "@agentplane/service-kit";
import { createTestDatabase } from "@agentplane/testkit";
import { assemblePlatform } from "../src/assemble.ts";
import { AllInOneEnvSchema } from "../src/config.ts";

/** The all-in-one on a Postgres database of its own with `OBJECT_LIMITS` set, and its owner token. */
export async function startLimitedAllInOne(
  name: string,
  objectLimits: string,
): Promise<{ url: string; owner: string; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), `agentplane-${name}-`));
  const owner = `owner_${randomBytes(24).toString("hex")}`;
  const testDb = await createTestDatabase(name);
  // A pool of several connections, so concurrent creates really run side by side.
  const database = await openDatabase(testDb.url, { max: 8 });
  const env = AllInOneEnvSchema.parse({
    PORT: "0",
    HOST: "127.0.0.1",
    AGENTPLANE_DATA_DIR: dataDir,
    AGENTPLANE_BOOTSTRAP_TOKEN: owner,
    AGENT_RUNTIME: "off",
    SANDBOX_LOCAL_ISOLATION: "none",
    LOG_LEVEL: "silent",
    RATE_LIMIT_PER_MINUTE: "100000",
    OBJECT_LIMITS: objectLimits,
  });
  const platform = await assemblePlatform({ env, dataDir, database, bus: new MemoryBus(), logger: silentLogger() });
  return {
    url: platform.url.replace("0.0.0.0", "127.0.0.1"),
    owner,
    async close() {
      await platform.close();
      await database.close();
      await testDb.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
