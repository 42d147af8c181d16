import type { Principal } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import {
  generateInternalKeys,
  type InternalKeys,
  inProcessFetch,
  ServiceClient,
  silentLogger,
} from "@agentplane/service-kit";
import { createSandboxService, type SandboxService } from "../src/app.ts";
import type { LocalDriver } from "../src/driver/local/local-driver.ts";
import { newDriver, tempDataDir } from "./helpers.ts";

export interface ApiFixture {
  service: SandboxService;
  /** The service's database, for rows a test needs in numbers no API call would make quickly. */
  database: Database;
  /** The internal keys the service verifies identities with (a WebSocket upgrade carries one signed). */
  keys: InternalKeys;
  /** Calls the service's public API as `principal`, as the gateway passes it on. */
  as(principal: Principal): <T>(method: string, path: string, body?: unknown) => Promise<T>;
  close(): Promise<void>;
}

/**
 * The service's HTTP API on a real database and local driver. Every question to tenancy is allowed
 * (in organization `org_api`): these tests are about answers, not who may ask.
 */
export async function apiFixture(options: { driver?: LocalDriver } = {}): Promise<ApiFixture> {
  const database: Database = await openDatabase("pglite://memory");
  const keys = await generateInternalKeys();
  const bus = new MemoryBus();
  const service = await createSandboxService({
    database,
    bus,
    keys,
    logger: silentLogger(),
    authorizer: { check: async () => ({ decision: "allowed", orgId: "org_api" }) },
    config: { dataDir: tempDataDir() },
    driver: options.driver ?? newDriver(),
  });
  const client = new ServiceClient("sandbox", inProcessFetch(service), keys);
  return {
    service,
    database,
    keys,
    as:
      (principal) =>
      <T>(method: string, path: string, body?: unknown) =>
        client.request<T>(method, path, { principal, ...(body === undefined ? {} : { body }) }),
    async close() {
      await service.close();
      await bus.close();
      await database.close();
    },
  };
}
