import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ALL_ROUTES } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assemblePlatform, type Platform } from "../src/assemble.ts";
import { AllInOneEnvSchema } from "../src/config.ts";

describe("every contract route is served through the all-in-one gateway", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agentplane-routes-"));
  const token = `owner_${randomBytes(24).toString("hex")}`;
  let database: Database;
  let platform: Platform;

  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    const env = AllInOneEnvSchema.parse({
      PORT: "0",
      HOST: "127.0.0.1",
      AGENTPLANE_DATA_DIR: dataDir,
      AGENTPLANE_BOOTSTRAP_TOKEN: token,
      AGENT_RUNTIME: "off",
      SANDBOX_LOCAL_ISOLATION: "none",
    });
    platform = await assemblePlatform({ env, dataDir, database, bus: new MemoryBus(), logger: silentLogger() });
  });
  afterAll(async () => {
    await platform.close();
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("reaches the owning service for each operation (no gateway 404/405/503, no service-level unknown route)", async () => {
    const misses: string[] = [];
    for (const route of ALL_ROUTES) {
      if (route["x-websocket"]) continue;
      const path = route.path.replaceAll(/\{([^}]+)\}/g, (_, name: string) => `${name}_unknown`);
      const method = route.method.toUpperCase();
      const res = await fetch(`${platform.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(method === "GET" || method === "DELETE" ? {} : { body: "{}" }),
      });
      const text = await res.text();
      const detail = text.startsWith("{") ? ((JSON.parse(text) as { detail?: string }).detail ?? "") : "";
      if (res.status === 405 || res.status === 503 || /^No route for/.test(detail)) {
        misses.push(`${method} ${route.path} → ${res.status} ${detail}`);
      }
    }
    expect(misses).toEqual([]);
  });
});
