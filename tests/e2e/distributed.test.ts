import { randomBytes } from "node:crypto";
import { generateInternalKeys } from "@agentplane/service-kit";
import {
  createTestDatabase,
  requirePostgres,
  requireRedis,
  TEST_REDIS_URL,
  type TestDatabase,
} from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type Spawned, spawnNode, waitForHealth } from "./processes.ts";
import { client, newcomerScenario } from "./scenario.ts";

const pg = await requirePostgres();
const redis = await requireRedis();
const LAUNCHER = "apps/platform/src/main.ts";

describe.skipIf(!pg.available || !redis.available)(
  `distributed: gateway and tenancy as separate processes on Postgres and Redis${pg.reason}${redis.reason}`,
  () => {
    let database: TestDatabase;
    const processes: Spawned[] = [];
    let gatewayUrl = "";
    const bootstrapToken = `boot_${randomBytes(24).toString("hex")}`;

    beforeAll(async () => {
      database = await createTestDatabase("e2e");
      const keys = await generateInternalKeys();
      const [tenancyPort, gatewayPort] = [await freePort(), await freePort()];
      const shared = {
        DATABASE_URL: database.url,
        REDIS_URL: TEST_REDIS_URL,
        INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(keys.privateJwk),
        AGENTPLANE_SECRET_KEY: randomBytes(32).toString("base64"),
        TENANCY_URL: `http://127.0.0.1:${tenancyPort}`,
        PUBLIC_URL: `http://127.0.0.1:${gatewayPort}`,
      };
      const tenancy = spawnNode(LAUNCHER, ["--target=tenancy"], {
        ...shared,
        PORT: String(tenancyPort),
        AGENTPLANE_BOOTSTRAP_TOKEN: bootstrapToken,
      });
      processes.push(tenancy);
      await waitForHealth(shared.TENANCY_URL);
      const gateway = spawnNode(LAUNCHER, ["--target=gateway"], { ...shared, PORT: String(gatewayPort) });
      processes.push(gateway);
      gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
      await waitForHealth(gatewayUrl);
    });

    afterAll(async () => {
      await Promise.all(processes.map((p) => p.stop()));
      await database?.drop();
    });

    it("never logs the bootstrap token", () => {
      for (const p of processes) expect(p.output()).not.toContain(bootstrapToken);
    });

    it("serves the newcomer walk-through over HTTP keep-alive dispatch", async () => {
      const installation = await client(gatewayUrl)<{ status: string }>("GET", "/v1/installation");
      expect(installation.body.status).toBe("activated");
      await newcomerScenario(gatewayUrl, bootstrapToken);
    });

    it("answers unknown paths, wrong methods and bad tokens with problems", async () => {
      const call = client(gatewayUrl, bootstrapToken);
      const missing = await call("GET", "/v1/nothing");
      expect(missing.status).toBe(404);
      expect(missing.headers.get("content-type")).toBe("application/problem+json");
      const wrong = await call("PUT", "/v1/orgs");
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get("allow")).toBe("GET, POST");
      const bad = await client(gatewayUrl, "apl_nope_nope")("GET", "/v1/auth/me");
      expect(bad.status).toBe(401);
      expect(bad.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    });
  },
);
