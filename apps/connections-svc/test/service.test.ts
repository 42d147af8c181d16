import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { generateInternalKeys, silentLogger } from "@agentplane/service-kit";
import { createTestDatabase, requirePostgres, type TestDatabase } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectionsService, createConnectionsService } from "../src/app.ts";
import { configFromEnv } from "../src/config.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`connections-svc instance${pg.reason}`, () => {
  let testDb: TestDatabase;
  let database: Database;
  let service: ConnectionsService;
  const bus = new MemoryBus();

  beforeAll(async () => {
    testDb = await createTestDatabase("conn");
    database = await openDatabase(testDb.url);
    service = await createConnectionsService({
      database,
      bus,
      keys: await generateInternalKeys(),
      logger: silentLogger(),
      authorizer: { check: async () => ({ decision: "not_found" }) },
      signer: { sign: () => Promise.reject(new Error("not used here")) },
    });
  });
  afterAll(async () => {
    await service.close();
    await database.close();
    await testDb.drop();
  });

  it("migrates its schema and reports ready on /health", async () => {
    expect(await service.ready()).toBe(true);
    const res = await service.fetch(new Request("http://svc/health"));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "ok", service: "connections" });
    const tables = await database.kysely
      .selectFrom("information_schema.tables")
      .select("table_name")
      .where("table_schema", "=", "connections")
      .execute();
    expect(tables.map((t: { table_name: string }) => t.table_name)).toEqual(
      expect.arrayContaining(["clusters", "aws_connections", "event_outbox"]),
    );
  });

  it("configFromEnv names the bad variable", () => {
    expect(() => configFromEnv({ CLUSTER_HEARTBEAT_MS: "5" })).toThrow(
      /^invalid configuration: CLUSTER_HEARTBEAT_MS: /,
    );
    expect(() => configFromEnv({ CONNECTOR_ALLOWED_HOSTS: "10.0.0.0/99" })).toThrow(
      "invalid configuration: CONNECTOR_ALLOWED_HOSTS: 10.0.0.0/99 is not a valid CIDR range",
    );
    const config = configFromEnv({});
    expect(config.heartbeatMs).toBe(10_000);
    expect(config.replicaId).toMatch(/^conn-/);
  });
});
