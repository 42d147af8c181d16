import {
  internalSpendReleaseRoute,
  internalSpendReserveRoute,
  internalSpendSettleRoute,
  type Principal,
} from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { servicePrincipal, signIdentity, silentLogger } from "@agentplane/service-kit";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, startActivated } from "../../tenancy-svc/test/fixtures/harness.ts";
import { type AuditService, createAuditService } from "../src/app.ts";
import { AUDIT_SCHEMA, type AuditDb } from "../src/db/schema.ts";
import { storeAuditRecords } from "../src/services/audit-records.ts";
import { auditEvent } from "./helpers.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`audit routes through the real tenancy service${pg.reason}`, () => {
  let database: Database;
  let drop: () => Promise<void>;
  let audit: AuditService;
  let tenancy: Awaited<ReturnType<typeof startActivated>>;
  let owner: Principal;
  let orgId: string;
  let otherOrgId: string;
  let viewer: Principal;

  const call = async (method: string, path: string, as: Principal | undefined, body?: unknown) => {
    const headers = new Headers();
    if (as) headers.set("x-agentplane-identity", await signIdentity(tenancy.keys, as, { audience: "audit" }));
    if (body !== undefined) headers.set("content-type", "application/json");
    return audit.fetch(
      new Request(`http://audit.test${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      }),
    );
  };

  beforeAll(async () => {
    const created = await createTestDatabase("audit_routes");
    drop = created.drop;
    database = await openDatabase(created.url, { max: 5 });
    tenancy = await startActivated(database);
    owner = tenancy.owner;
    orgId = tenancy.orgId;
    const other = await tenancy.call("POST", "/v1/orgs", {
      as: await tenancy.oidcUser("eve@example.test"),
      body: { name: "Other" },
    });
    otherOrgId = ((await other.json()) as { id: string }).id;
    viewer = await addMember(tenancy, owner, orgId, "vera@example.test", "viewer");
    audit = await createAuditService({
      database,
      bus: new MemoryBus(),
      keys: tenancy.keys,
      logger: silentLogger(),
      authorizer: tenancy.service.authorizer,
      config: { maintenance: false },
    });
  }, 60_000);
  afterAll(async () => {
    await audit?.close();
    await tenancy?.service.close();
    await database?.close();
    await drop?.();
  });

  it("pages the audit trail by nextCursor, newest first", async () => {
    const db = database.forSchema<AuditDb>(AUDIT_SCHEMA);
    await storeAuditRecords(
      db,
      Array.from({ length: 7 }, () => auditEvent({ orgId, time: "2026-05-05T05:05:05.005Z" })),
    );
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const res = await call("GET", `/v1/orgs/${orgId}/audit-trail?limit=3${cursor ? `&cursor=${cursor}` : ""}`, owner);
      expect(res.status).toBe(200);
      const page = (await res.json()) as { items: { id: string; time: string }[]; nextCursor?: string };
      seen.push(...page.items.map((i) => i.time));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(seen).toHaveLength(7);
    expect([...seen].sort().reverse()).toEqual(seen);
  });

  it("answers bad input with a 400 problem", async () => {
    const bad = [
      `/v1/orgs/${orgId}/audit-trail?cursor=yesterday`,
      `/v1/orgs/${orgId}/audit-trail?limit=501`,
      `/v1/orgs/${orgId}/audit-trail?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z`,
      `/v1/orgs/${orgId}/audit-trail/stats?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z`,
      `/v1/orgs/${orgId}/audit-trail/timeseries?interval=week`,
      `/v1/orgs/${orgId}/audit-trail/timeseries?interval=hour&from=2026-01-01T00:00:00Z&to=2026-06-01T00:00:00Z`,
      `/v1/orgs/${orgId}/usage-costs?groupBy=team`,
      `/v1/orgs/${orgId}/usage-costs/timeseries?interval=minute`,
      // Postgres has no year 0: these were 500s.
      `/v1/orgs/${orgId}/audit-trail?cursor=0000-01-01T00:00:00Z`,
      `/v1/orgs/${orgId}/audit-trail?from=0000-01-01T00:00:00Z`,
      `/v1/orgs/${orgId}/audit-trail?to=0000-06-01T00:00:00Z`,
      `/v1/orgs/${orgId}/audit-trail/stats?from=0000-01-01T00:00:00Z`,
      `/v1/orgs/${orgId}/audit-trail/timeseries?interval=day&to=0000-12-31T00:00:00Z`,
      `/v1/orgs/${orgId}/usage-costs?from=0000-01-01T00:00:00Z`,
      `/v1/installation/audit-trail?cursor=0000-01-01T00:00:00Z`,
    ];
    for (const path of bad) {
      const res = await call("GET", path, owner);
      expect(res.status, path).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      const problem = (await res.json()) as { errors?: { pointer: string }[] };
      expect(problem.errors?.length, path).toBeGreaterThan(0);
    }
    // A default window that would reach back before the year 1 stops there.
    for (const path of [
      `/v1/orgs/${orgId}/audit-trail/timeseries?interval=day&to=0001-01-02T00:00:00Z`,
      `/v1/orgs/${orgId}/usage-costs/timeseries?interval=day&to=0001-01-02T00:00:00Z`,
    ]) {
      const res = await call("GET", path, owner);
      expect(res.status, path).toBe(200);
      expect(((await res.json()) as { buckets: unknown[] }).buckets, path).toHaveLength(1);
    }
    const negative = await call("POST", `/v1/orgs/${orgId}/spending-limits`, owner, { amountUsd: -5 });
    expect(negative.status).toBe(400);
    expect(((await negative.json()) as { errors: { pointer: string }[] }).errors[0]?.pointer).toBe("/body/amountUsd");
  });

  it("answers 404 for another organization and 403 for a role below admin", async () => {
    for (const path of [
      "audit-trail",
      "audit-trail/stats",
      "usage-costs",
      "spending-limits",
      "spending-limits/status",
    ]) {
      expect((await call("GET", `/v1/orgs/${otherOrgId}/${path}`, owner)).status, path).toBe(404);
      expect((await call("GET", `/v1/orgs/${orgId}/${path}`, viewer)).status, path).toBe(403);
    }
    expect((await call("GET", `/v1/orgs/${orgId}/audit-trail`, undefined)).status).toBe(401);
  });

  it("creates, reads, changes and deletes spending limits and reports their status", async () => {
    const created = await call("POST", `/v1/orgs/${orgId}/spending-limits`, owner, { amountUsd: 25 });
    expect(created.status).toBe(201);
    const limit = (await created.json()) as { id: string; period: string; alertThresholds: number[] };
    expect(limit).toMatchObject({ period: "monthly", alertThresholds: [80], projectId: null });
    expect((await call("GET", `/v1/orgs/${orgId}/spending-limits/${limit.id}`, owner)).status).toBe(200);
    // The limit is invisible through another organization's path.
    const eve = await tenancy.oidcUser("eve@example.test");
    expect((await call("GET", `/v1/orgs/${otherOrgId}/spending-limits/${limit.id}`, eve)).status).toBe(404);
    const patched = await call("PATCH", `/v1/orgs/${orgId}/spending-limits/${limit.id}`, owner, {
      amountUsd: 40,
      alertThresholds: [50, 90],
    });
    expect(await patched.json()).toMatchObject({ amountUsd: 40, alertThresholds: [50, 90] });
    const status = (await (await call("GET", `/v1/orgs/${orgId}/spending-limits/status`, owner)).json()) as {
      items: { limitId: string; state: string; remainingUsd: number; periodStart: string; periodEnd: string }[];
    };
    expect(status.items[0]).toMatchObject({ limitId: limit.id, state: "ok", remainingUsd: 40 });
    expect(new Date(status.items[0]!.periodStart).getUTCDate()).toBe(1);
    expect((await call("DELETE", `/v1/orgs/${orgId}/spending-limits/${limit.id}`, owner)).status).toBe(204);
    expect((await call("GET", `/v1/orgs/${orgId}/spending-limits/${limit.id}`, owner)).status).toBe(404);
  });

  it("refuses a second limit of the same scope and period with a 409 naming the existing one", async () => {
    const first = await call("POST", `/v1/orgs/${orgId}/spending-limits`, owner, { amountUsd: 100 });
    expect(first.status).toBe(201);
    const limit = (await first.json()) as { id: string };
    const second = await call("POST", `/v1/orgs/${orgId}/spending-limits`, owner, { amountUsd: 50 });
    expect(second.status).toBe(409);
    expect(second.headers.get("content-type")).toContain("application/problem+json");
    const problem = (await second.json()) as { type: string; detail: string; existingLimitId: string };
    expect(problem.type).toMatch(/\/conflict$/);
    expect(problem.existingLimitId).toBe(limit.id);
    expect(problem.detail).toContain(limit.id);
    // A daily limit is another scope-period pair; moving it onto the monthly one is refused alike.
    const daily = (await (
      await call("POST", `/v1/orgs/${orgId}/spending-limits`, owner, { amountUsd: 5, period: "daily" })
    ).json()) as { id: string };
    const moved = await call("PATCH", `/v1/orgs/${orgId}/spending-limits/${daily.id}`, owner, { period: "monthly" });
    expect(moved.status).toBe(409);
    expect(((await moved.json()) as { existingLimitId: string }).existingLimitId).toBe(limit.id);
    const listed = (await (await call("GET", `/v1/orgs/${orgId}/spending-limits`, owner)).json()) as {
      items: { id: string; amountUsd: number; period: string }[];
    };
    expect(listed.items.map((l) => [l.id, l.amountUsd, l.period])).toEqual([
      [limit.id, 100, "monthly"],
      [daily.id, 5, "daily"],
    ]);
    for (const id of [limit.id, daily.id]) {
      expect((await call("DELETE", `/v1/orgs/${orgId}/spending-limits/${id}`, owner)).status).toBe(204);
    }
  });

  it("records a domain event for each spending-limit write, committed with it", async () => {
    const created = await call("POST", `/v1/orgs/${orgId}/spending-limits`, owner, { amountUsd: 5, period: "daily" });
    const limit = (await created.json()) as { id: string };
    await call("PATCH", `/v1/orgs/${orgId}/spending-limits/${limit.id}`, owner, { amountUsd: 6 });
    expect((await call("DELETE", `/v1/orgs/${orgId}/spending-limits/${limit.id}`, owner)).status).toBe(204);
    // The service's outbox relays them to the bus, from which this same service stores the trail.
    const db = database.forSchema<AuditDb>(AUDIT_SCHEMA);
    const recorded = () =>
      db
        .selectFrom("audit_records")
        .select(["action", "source", "org_id", "principal_id", "target_type"])
        .where("target_id", "=", limit.id)
        .orderBy("ts")
        .execute();
    await expect.poll(async () => (await recorded()).length, { timeout: 15_000, interval: 100 }).toBe(3);
    await audit.drain();
    expect(await recorded()).toEqual(
      ["spending_limit.created", "spending_limit.updated", "spending_limit.deleted"].map((action) => ({
        action,
        source: "domain",
        org_id: orgId,
        principal_id: owner.id,
        target_type: "spending_limit",
      })),
    );
    const res = await call("POST", `/v1/orgs/${orgId}/spending-limits`, viewer, { amountUsd: 5 });
    expect(res.status).toBe(403);
  });

  it("refuses an amount that would be stored as a limit of $0, and keeps $0 itself", async () => {
    const path = `/v1/orgs/${orgId}/spending-limits`;
    const tiny = await call("POST", path, owner, { amountUsd: 1e-9, period: "daily" });
    expect(tiny.status).toBe(400);
    const problem = (await tiny.json()) as { errors: { pointer: string; message: string }[] };
    expect(problem.errors).toEqual([
      expect.objectContaining({
        pointer: "/body/amountUsd",
        message: "At least 0.000001 (a millionth of a dollar), or 0 to refuse every model call",
      }),
    ]);
    const created = await call("POST", path, owner, { amountUsd: 0.000001, period: "daily" });
    expect(created.status).toBe(201);
    const limit = (await created.json()) as { id: string; amountUsd: number };
    expect(limit.amountUsd).toBe(0.000001);
    const patched = await call("PATCH", `${path}/${limit.id}`, owner, { amountUsd: 4e-7 });
    expect(patched.status).toBe(400);
    expect(((await patched.json()) as { errors: { pointer: string }[] }).errors[0]?.pointer).toBe("/body/amountUsd");
    const zero = await call("PATCH", `${path}/${limit.id}`, owner, { amountUsd: 0 });
    expect(((await zero.json()) as { amountUsd: number }).amountUsd).toBe(0);
    expect((await call("DELETE", `${path}/${limit.id}`, owner)).status).toBe(204);
  });

  it("leaves a limit as it is, without an event, on a PATCH that changes nothing", async () => {
    const path = `/v1/orgs/${orgId}/spending-limits`;
    const created = await call("POST", path, owner, { amountUsd: 7, period: "monthly", alertThresholds: [90, 50] });
    const limit = (await created.json()) as { id: string; updatedAt: string };
    for (const body of [{}, { amountUsd: 7 }, { period: "monthly", alertThresholds: [50, 90] }]) {
      const res = await call("PATCH", `${path}/${limit.id}`, owner, body);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(await res.json(), JSON.stringify(body)).toEqual(limit);
    }
    // A real change is still recorded and moves updatedAt.
    const changed = await call("PATCH", `${path}/${limit.id}`, owner, { amountUsd: 8 });
    const after = (await changed.json()) as { amountUsd: number; updatedAt: string };
    expect(after.amountUsd).toBe(8);
    expect(after.updatedAt > limit.updatedAt).toBe(true);
    // Its event comes after any the patches before it would have recorded: then only it is there.
    const db = database.forSchema<AuditDb>(AUDIT_SCHEMA);
    const updates = () =>
      db
        .selectFrom("audit_records")
        .select("action")
        .where("target_id", "=", limit.id)
        .where("action", "=", "spending_limit.updated")
        .execute();
    await expect.poll(async () => (await updates()).length, { timeout: 15_000, interval: 100 }).toBeGreaterThan(0);
    await audit.drain();
    expect(await updates()).toHaveLength(1);
    expect((await call("DELETE", `${path}/${limit.id}`, owner)).status).toBe(204);
  });

  it("serves the spend decision API to service principals only", async () => {
    const asProxy = servicePrincipal("inference");
    const reserved = await call("POST", internalSpendReserveRoute.path, asProxy, { orgId, estimatedMicroUsd: 5000 });
    expect(reserved.status).toBe(200);
    const { reservationId, decision } = (await reserved.json()) as { reservationId: string; decision: string };
    expect(decision).toBe("allowed");
    const settled = await call("POST", internalSpendSettleRoute.path, asProxy, { reservationId, costMicroUsd: 4000 });
    expect(await settled.json()).toEqual({ reservationId, state: "settled" });
    expect((await call("POST", internalSpendReserveRoute.path, owner, { orgId, estimatedMicroUsd: 1 })).status).toBe(
      403,
    );
    expect((await call("POST", internalSpendReleaseRoute.path, asProxy, { reservationId: "rsv_nope" })).status).toBe(
      404,
    );
    expect((await call("POST", internalSpendReserveRoute.path, asProxy, { orgId, estimatedMicroUsd: -1 })).status).toBe(
      400,
    );
  });
});
