// The real all-in-one platform on port 0 (PGlite in memory), for the SDK's and the CLI's tests.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { silentLogger } from "@agentplane/service-kit";
import { assemblePlatform, type Platform } from "../../../apps/platform/src/assemble.ts";
import { AllInOneEnvSchema } from "../../../apps/platform/src/config.ts";

export interface TestPlatform {
  url: string;
  platform: Platform;
  /** The owner token (activated installations only). */
  ownerToken: string;
  /** The setup code printed while the installation awaits activation. */
  setupCode: string | undefined;
  close(): Promise<void>;
}

/** Starts the platform; `activated: false` leaves it waiting for the activation device flow. */
export async function startTestPlatform(
  options: { activated?: boolean; env?: Record<string, string> } = {},
): Promise<TestPlatform> {
  const dataDir = mkdtempSync(join(tmpdir(), "agentplane-sdk-"));
  const ownerToken = options.activated === false ? "" : `boot_${randomBytes(24).toString("hex")}`;
  const env = AllInOneEnvSchema.parse({
    PORT: "0",
    HOST: "127.0.0.1",
    AGENTPLANE_DATA_DIR: dataDir,
    ...(ownerToken ? { AGENTPLANE_BOOTSTRAP_TOKEN: ownerToken } : {}),
    AGENT_RUNTIME: "off",
    LOG_LEVEL: "silent",
    ...options.env,
  });
  const database = await openDatabase("pglite://memory");
  const bus = new MemoryBus();
  const platform = await assemblePlatform({ env, dataDir, database, bus, logger: silentLogger() });
  return {
    url: platform.url.replace("0.0.0.0", "127.0.0.1"),
    platform,
    ownerToken,
    setupCode: platform.setupCode,
    async close() {
      await platform.close();
      await bus.close();
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
