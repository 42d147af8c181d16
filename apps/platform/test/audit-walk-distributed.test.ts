import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SERVICE_NAMES, type ServiceName } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { generateInternalKeys } from "@agentplane/service-kit";
import {
  createTestDatabase,
  freePort,
  OwnRedis,
  requirePostgres,
  requireRedis,
  type TestDatabase,
  waitForHealth,
} from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  expectCompleteAudit,
  expectedRecordCount,
  type StoredRequestRecord,
  type WalkedCall,
  walkEveryRoute,
} from "./audit-walk.ts";
import { fuzzRoutes } from "./fuzz.ts";

const pg = await requirePostgres();
const redis = await requireRedis();
const LAUNCHER = fileURLToPath(new URL("../src/main.ts", import.meta.url));
const DEPLOYED = new Set<ServiceName>(SERVICE_NAMES);
/** Every service of the contracts, each its own process, and the gateway in front. */
const SERVICES = ["tenancy", "audit", "governance", "sandbox", "connections", "inference"] as const;
const URL_VARIABLES = {
  tenancy: "TENANCY_URL",
  audit: "AUDIT_URL",
  governance: "GOVERNANCE_URL",
  sandbox: "SANDBOX_URL",
  connections: "CONNECTIONS_URL",
  inference: "INFERENCE_URL",
} as const;

async function storedRequestRecords(database: Database): Promise<StoredRequestRecord[]> {
  type Trail = { audit_records: { request_id: string; org_id: string | null; status: number | null; source: string } };
  const rows = await database
    .forSchema<Trail>("audit")
    .selectFrom("audit_records")
    .select(["request_id", "org_id", "status"])
    .where("source", "=", "request")
    .execute();
  return rows.map((r) => ({ requestId: r.request_id, orgId: r.org_id, status: r.status }));
}

describe.skipIf(!pg.available || !redis.available)(
  `audit completeness, distributed: the gateway and every service as separate processes on Postgres and Redis${pg.reason}${redis.reason}`,
  () => {
    let testDb: TestDatabase;
    let database: Database;
    const server = new OwnRedis();
    let launcher: ChildProcess | undefined;
    let output = "";
    let gatewayUrl = "";
    const dataDir = mkdtempSync(join(tmpdir(), "agentplane-walk-distributed-"));
    const ownerToken = `boot_${randomBytes(24).toString("hex")}`;

    beforeAll(async () => {
      testDb = await createTestDatabase("walk");
      database = await openDatabase(testDb.url, { max: 2 });
      // A Redis of this suite's own: no other suite's consumers take its audit events.
      await server.start();
      const keys = await generateInternalKeys();
      const urls: Record<string, string> = {};
      for (const name of SERVICES) urls[URL_VARIABLES[name]] = `http://127.0.0.1:${await freePort()}`;
      const gatewayPort = await freePort();
      gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
      launcher = spawn(process.execPath, [LAUNCHER, `--target=${[...SERVICES, "gateway"].join(",")}`], {
        env: {
          ...process.env,
          LOG_LEVEL: "warn",
          PORT: String(gatewayPort),
          HOST: "127.0.0.1",
          DATABASE_URL: testDb.url,
          REDIS_URL: server.url,
          INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(keys.privateJwk),
          AGENTPLANE_SECRET_KEY: randomBytes(32).toString("base64"),
          AGENTPLANE_BOOTSTRAP_TOKEN: ownerToken,
          ...urls,
          PUBLIC_URL: gatewayUrl,
          AGENTPLANE_API_URL: gatewayUrl,
          SANDBOX_DATA_DIR: dataDir,
          SANDBOX_LOCAL_ISOLATION: "none",
          RATE_LIMIT_PER_MINUTE: "100000",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const collect = (c: Buffer) => {
        output += c.toString();
      };
      launcher.stdout?.on("data", collect);
      launcher.stderr?.on("data", collect);
      try {
        for (const url of [...Object.values(urls), gatewayUrl]) await waitForHealth(url, 200_000);
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${output}`);
      }
      // Seven processes compile and migrate on start: slow on a loaded machine.
    }, 400_000);

    afterAll(async () => {
      if (launcher && launcher.exitCode === null) {
        launcher.kill("SIGTERM");
        await once(launcher, "exit");
      }
      await database?.close();
      await testDb?.drop();
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    async function expectAudited(calls: WalkedCall[]): Promise<void> {
      const expected = expectedRecordCount(calls);
      const ids = new Set(calls.map((c) => c.requestId));
      const stored = async () => (await storedRequestRecords(database)).filter((r) => ids.has(r.requestId));
      await vi.waitFor(async () => expect((await stored()).length).toBeGreaterThanOrEqual(expected), {
        timeout: 90_000,
        interval: 200,
      });
      // Every expected record is there; a duplicate already stored or a record of an unaudited call fails the check.
      expectCompleteAudit(calls, await stored());
    }

    it("stores one request record per mutating call and per 401/403, naming its organization", async () => {
      await expectAudited(await walkEveryRoute(gatewayUrl, ownerToken, DEPLOYED));
    }, 300_000);

    it("answers fuzzed paths, queries and bodies below 500 and loses no audit record", async () => {
      await expectAudited(await fuzzRoutes(gatewayUrl, ownerToken, DEPLOYED, { seed: 11, count: 200 }));
    }, 300_000);
  },
);
