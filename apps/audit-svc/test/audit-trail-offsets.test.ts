import type { Principal } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { signIdentity, silentLogger } from "@agentplane/service-kit";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startActivated } from "../../tenancy-svc/test/fixtures/harness.ts";
import { type AuditService, createAuditService } from "../src/app.ts";
import { AUDIT_SCHEMA, type AuditDb } from "../src/db/schema.ts";
import { storeAuditRecords } from "../src/services/audit-records.ts";
import { auditEvent } from "./helpers.ts";

const pg = await requirePostgres();

// RFC 3339 allows UTC offsets up to ±23:59; Postgres stops at ±15:59 and failed the page with a 500.
describe.skipIf(!pg.available)(`audit trail times with any RFC 3339 offset${pg.reason}`, () => {
  let database: Database;
  let drop: () => Promise<void>;
  let audit: AuditService;
  let tenancy: Awaited<ReturnType<typeof startActivated>>;
  let owner: Principal;
  let orgId: string;

  const page = async (query: string) => {
    const headers = { "x-agentplane-identity": await signIdentity(tenancy.keys, owner, { audience: "audit" }) };
    return audit.fetch(new Request(`http://audit.test/v1/orgs/${orgId}/audit-trail?${query}`, { headers }));
  };
  const times = async (query: string) => {
    const res = await page(query);
    expect(res.status, query).toBe(200);
    return ((await res.json()) as { items: { time: string }[] }).items.map((r) => r.time);
  };

  beforeAll(async () => {
    const created = await createTestDatabase("audit_offsets");
    drop = created.drop;
    database = await openDatabase(created.url, { max: 5 });
    tenancy = await startActivated(database);
    owner = tenancy.owner;
    orgId = tenancy.orgId;
    audit = await createAuditService({
      database,
      bus: new MemoryBus(),
      keys: tenancy.keys,
      logger: silentLogger(),
      authorizer: tenancy.service.authorizer,
      config: { maintenance: false },
    });
    await storeAuditRecords(
      database.forSchema<AuditDb>(AUDIT_SCHEMA),
      ["2026-03-01T10:00:00.000001Z", "2026-03-01T12:00:00.000002Z", "2026-03-01T14:00:00.000003Z"].map((time) =>
        auditEvent({ orgId, time, action: "offsetProbe" }),
      ),
    );
  }, 60_000);
  afterAll(async () => {
    await audit?.close();
    await tenancy?.service.close();
    await database?.close();
    await drop?.();
  });

  it("reads a cursor, from and to beyond ±15:59 as the same instant in UTC", async () => {
    // 2026-03-02T11:59:00.000003+23:59 is 2026-03-01T12:00:00.000003Z.
    expect(await times("action=offsetProbe&cursor=2026-03-02T11:59:00.000003%2B23:59")).toEqual([
      "2026-03-01T12:00:00.000002Z",
      "2026-03-01T10:00:00.000001Z",
    ]);
    expect(await times("action=offsetProbe&cursor=2026-03-02T11:59:00.000002%2B23:59")).toEqual([
      "2026-03-01T10:00:00.000001Z",
    ]);
    // 2026-02-28T18:00:00.000002-18:00 is 2026-03-01T12:00:00.000002Z (inclusive), to excludes 14:00.
    expect(
      await times("action=offsetProbe&from=2026-02-28T18:00:00.000002-18:00&to=2026-03-01T22:00:00.000003%2B08:00"),
    ).toEqual(["2026-03-01T12:00:00.000002Z"]);
  });

  it("answers 400 naming the parameter for a time an offset moves past the year 9999", async () => {
    const late = "9999-12-31T23:00:00-17:00";
    const headers = { "x-agentplane-identity": await signIdentity(tenancy.keys, owner, { audience: "audit" }) };
    for (const [path, name] of [
      [`audit-trail?from=${late}`, "from"],
      [`audit-trail?cursor=${late}`, "cursor"],
      [`audit-trail/stats?to=${late}`, "to"],
      [`audit-trail/timeseries?interval=day&from=9999-12-31T00:00:00Z&to=${late}`, "to"],
      [`usage-costs?to=${late}`, "to"],
      [`usage-costs/timeseries?to=${late}`, "to"],
    ] as const) {
      const res = await audit.fetch(new Request(`http://audit.test/v1/orgs/${orgId}/${path}`, { headers }));
      expect(res.status, path).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      const problem = (await res.json()) as { errors: { pointer: string }[] };
      expect(problem.errors[0]?.pointer, path).toBe(`/query/${name}`);
    }
    // The last microsecond of the year 9999 is still a time to ask about.
    expect(await times("action=offsetProbe&cursor=9999-12-31T23:59:59.999999Z")).toHaveLength(3);
  });
});
