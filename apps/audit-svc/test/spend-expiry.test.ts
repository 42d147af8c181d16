import type { Database } from "@agentplane/db";
import { openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { Pricing } from "@agentplane/pricing";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_SCHEMA, type AuditService } from "../src/app.ts";
import type { AuditDb } from "../src/db/schema.ts";
import { SpendLedger } from "../src/services/spend.ts";
import { createSpendingLimit, spendingLimitStatus } from "../src/services/spending-limits.ts";
import { storeUsageRecords, usageCosts } from "../src/services/usage.ts";
import { asOwner, startAudit, usageEvent } from "./helpers.ts";

/** A clock reading a second from now: past the expiry of every reservation made in this suite. */
const later = () => new Date(Date.now() + 1000);

const pg = await requirePostgres();

// A proxy that crashes mid-stream never settles nor releases: the reservation expires and the
// audit service settles it at its estimate, once; a report that arrives late replaces the estimate.
describe.skipIf(!pg.available)(`reservation expiry after a crash${pg.reason}`, () => {
  let database: Database;
  let drop: () => Promise<void>;
  let service: AuditService;
  const db = () => database.forSchema<AuditDb>(AUDIT_SCHEMA);
  const window = () => ({ from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 3_600_000) });
  const call = {
    principalType: "api_token",
    principalId: "tok_runtime",
    provider: "cloud-b",
    model: "claude-haiku-4-5",
    route: "/llm/cloud-b/family-1",
  };

  beforeAll(async () => {
    const created = await createTestDatabase("spend_expiry");
    drop = created.drop;
    database = await openDatabase(created.url, { max: 5 });
    service = await startAudit(database, new MemoryBus(), { reservationTtlMs: 150 });
  });
  afterAll(async () => {
    await service?.close();
    await database?.close();
    await drop?.();
  });

  it("settles an expired reservation at its estimate, once, as a usage record of the call", async () => {
    const limit = await createSpendingLimit(...asOwner(database, "org_crash"), {
      amountUsd: 1,
      period: "monthly",
      alertThresholds: [],
    });
    // Read before the reservation: it expires 150 ms after this at the earliest, however long the
    // reservation and the checks below take on a busy machine.
    const beforeReserving = new Date();
    const r = await service.spend.reserve({
      orgId: "org_crash",
      projectId: "prj_crash",
      estimatedMicroUsd: 123_456,
      requestId: "req_crash",
      call,
    });
    expect(r.decision).toBe("allowed");
    // Not expired yet: nothing is charged, the estimate is held.
    expect(await service.expireReservations(beforeReserving)).toBe(0);
    let status = await spendingLimitStatus(db(), "org_crash");
    expect(status.items[0]).toMatchObject({ limitId: limit.id, reservedUsd: 0.123456, spentUsd: 0 });

    // A second later (the reservations of this suite live 150 ms).
    expect(await service.expireReservations(later())).toBe(1);
    // A second maintenance run finds nothing left to do: the estimate is counted once.
    expect(await service.expireReservations(later())).toBe(0);

    const costs = await usageCosts(db(), "org_crash", window(), "model");
    expect(costs.total).toMatchObject({ requests: 1, costMicroUsd: 123_456 });
    expect(costs.groups).toEqual([expect.objectContaining({ key: "claude-haiku-4-5", costMicroUsd: 123_456 })]);
    const row = await db()
      .selectFrom("usage_records")
      .selectAll()
      .where("reservation_id", "=", r.reservationId!)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ provider: "cloud-b", principal_id: "tok_runtime", request_id: "req_crash" });
    status = await spendingLimitStatus(db(), "org_crash");
    expect(status.items[0]).toMatchObject({ reservedUsd: 0, spentUsd: 0.123456 });
  });

  it("replaces the estimate with the real cost when the usage event arrives after the expiry", async () => {
    await createSpendingLimit(...asOwner(database, "org_late"), { amountUsd: 1, period: "daily", alertThresholds: [] });
    const r = await service.spend.reserve({ orgId: "org_late", estimatedMicroUsd: 200_000, call });
    // A second later (the reservations of this suite live 150 ms).
    expect(await service.expireReservations(later())).toBe(1);
    const deps = { pricing: new Pricing(), spend: new SpendLedger(db()) };
    const late = usageEvent({
      orgId: "org_late",
      projectId: undefined,
      costMicroUsd: 30_000,
      reservationId: r.reservationId!,
    });
    await storeUsageRecords(db(), deps, [late]);
    // Redelivered: stored once, counted once.
    await storeUsageRecords(db(), deps, [late]);
    const costs = await usageCosts(db(), "org_late", window(), "project");
    expect(costs.total).toMatchObject({ requests: 1, costMicroUsd: 30_000 });
    const status = await spendingLimitStatus(db(), "org_late");
    expect(status.items[0]?.spentUsd).toBeCloseTo(0.03, 9);
    expect(status.items[0]?.reservedUsd).toBe(0);
  });
});
