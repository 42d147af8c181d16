import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { ConfigError, deploymentEnv, parseEnv, silentLogger } from "@agentplane/service-kit";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { describe, expect, it } from "vitest";
import { assemblePlatform } from "../src/assemble.ts";
import { AllInOneEnvSchema } from "../src/config.ts";

const pg = await requirePostgres();

describe("HTTP_KEEP_ALIVE_TIMEOUT_MS", () => {
  const schemas = { "the all-in-one": AllInOneEnvSchema, "a service of its own": deploymentEnv(8081) };

  it.each(Object.entries(schemas))("is 65 s in %s unless set, and refuses what is not 1 s to 1 h", (_, schema) => {
    const env = { DATABASE_URL: "postgres://x" };
    expect(parseEnv(schema, env).HTTP_KEEP_ALIVE_TIMEOUT_MS).toBe(65_000);
    expect(parseEnv(schema, { ...env, HTTP_KEEP_ALIVE_TIMEOUT_MS: "620000" }).HTTP_KEEP_ALIVE_TIMEOUT_MS).toBe(620_000);
    for (const bad of ["0", "500", "soon", "3600001"]) {
      let error: unknown;
      try {
        parseEnv(schema, { ...env, HTTP_KEEP_ALIVE_TIMEOUT_MS: bad });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variables).toEqual(["HTTP_KEEP_ALIVE_TIMEOUT_MS"]);
    }
  });

  it.skipIf(!pg.available)(`is what the all-in-one's server holds idle connections for${pg.reason}`, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agentplane-keep-alive-"));
    const testDb = await createTestDatabase("keep_alive");
    const database = await openDatabase(testDb.url);
    const env = AllInOneEnvSchema.parse({
      PORT: "0",
      HOST: "127.0.0.1",
      AGENTPLANE_DATA_DIR: dataDir,
      AGENT_RUNTIME: "off",
      SANDBOX_LOCAL_ISOLATION: "none",
      LOG_LEVEL: "silent",
      HTTP_KEEP_ALIVE_TIMEOUT_MS: "120000",
    });
    const platform = await assemblePlatform({ env, dataDir, database, bus: new MemoryBus(), logger: silentLogger() });
    try {
      const res = await fetch(`${platform.url.replace("0.0.0.0", "127.0.0.1")}/health`);
      await res.arrayBuffer();
      expect(res.headers.get("keep-alive")).toBe("timeout=120");
    } finally {
      await platform.close();
      await database.close();
      await testDb.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
