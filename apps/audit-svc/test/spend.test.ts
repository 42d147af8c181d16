import type { Database } from "@agentplane/db";
import { openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { Pricing } from "@agentplane/pricing";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_SCHEMA, type AuditService } from "../src/app.ts";
import type { AuditDb } from "../src/db/schema.ts";
import { listAuditTrail } from "../src/services/audit-records.ts";
import { SpendLedger } from "../src/services/spend.ts";
import { createSpendingLimit, spendingLimitStatus, updateSpendingLimit } from "../src/services/spending-limits.ts";
import { storeUsageRecords } from "../src/services/usage.ts";
import { asOwner, startAudit, usageEvent } from "./helpers.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`spending limits and reservations${pg.reason}`, () => {
  let database: Database;
  let drop: () => Promise<void>;
  let service: AuditService;
  const db = () => database.forSchema<AuditDb>(AUDIT_SCHEMA);

  beforeAll(async () => {
    const created = await createTestDatabase("spend");
    drop = created.drop;
    database = await openDatabase(created.url, { max: 10 });
    service = await startAudit(database, new MemoryBus(), { reservationTtlMs: 200 });
  });
  afterAll(async () => {
    await service?.close();
    await database?.close();
    await drop?.();
  });

  it("lets 100 concurrent reservations against a nearly spent limit overshoot by at most one", async () => {
    const limit = await createSpendingLimit(...asOwner(database, "org_race"), {
      amountUsd: 10,
      period: "monthly",
      alertThresholds: [80],
    });
    // $9.99 of the $10 already spent this month: room for ten reservations of $0.001.
    await storeUsageRecords(db(), { pricing: new Pricing(), spend: new SpendLedger(db()) }, [
      usageEvent({ orgId: "org_race", costMicroUsd: 9_990_000 }),
    ]);
    const estimate = 1000;
    const results = await Promise.all(
      Array.from({ length: 100 }, () => service.spend.reserve({ orgId: "org_race", estimatedMicroUsd: estimate })),
    );
    const allowed = results.filter((r) => r.decision === "allowed");
    const denied = results.filter((r) => r.decision === "denied");
    expect(allowed.length).toBeGreaterThanOrEqual(10);
    expect(allowed.length * estimate).toBeLessThanOrEqual(10_000 + estimate);
    expect(denied.every((r) => r.limitId === limit.id)).toBe(true);

    const held = await spendingLimitStatus(db(), "org_race");
    expect(held.items[0]?.reservedUsd).toBeCloseTo((allowed.length * estimate) / 1e6, 9);
    expect(held.items[0]?.state).toBe("warning");

    // Settling every reservation at its estimate spends the limit exactly: it is reached.
    for (const r of allowed) await service.spend.settle({ reservationId: r.reservationId!, costMicroUsd: estimate });
    const status = await spendingLimitStatus(db(), "org_race");
    expect(status.items[0]).toMatchObject({ state: "exceeded", reservedUsd: 0, remainingUsd: 0 });
    expect((await service.spend.reserve({ orgId: "org_race", estimatedMicroUsd: 1 })).decision).toBe("denied");

    const trail = await listAuditTrail(db(), "org_race", { limit: 50 });
    // The alerts; the limit's creation is in the trail too once the outbox relay has run (a domain event).
    const alerts = trail.items.map((i) => i.action).filter((a) => a !== "spending_limit.created");
    expect(alerts.sort()).toEqual(["spending_limit.reached", "spending_limit.threshold_crossed"]);
    expect(trail.items.find((i) => i.action === "spending_limit.threshold_crossed")?.details).toMatchObject({
      threshold: 80,
    });
  }, 60_000);

  it("applies project limits only to their project, and settles, releases and expires holds", async () => {
    const orgLimit = await createSpendingLimit(...asOwner(database, "org_scope"), {
      amountUsd: 100,
      period: "daily",
      alertThresholds: [50, 90],
    });
    const prjLimit = await createSpendingLimit(...asOwner(database, "org_scope"), {
      amountUsd: 1,
      period: "monthly",
      projectId: "prj_small",
      alertThresholds: [80],
    });
    const denied = await service.spend.reserve({
      orgId: "org_scope",
      projectId: "prj_small",
      estimatedMicroUsd: 2_000_000,
    });
    expect(denied).toMatchObject({ decision: "denied", limitId: prjLimit.id });
    const other = await service.spend.reserve({
      orgId: "org_scope",
      projectId: "prj_big",
      estimatedMicroUsd: 2_000_000,
    });
    expect(other.decision).toBe("allowed");

    const a = await service.spend.reserve({ orgId: "org_scope", projectId: "prj_small", estimatedMicroUsd: 500_000 });
    expect(a.decision).toBe("allowed");
    // Settled above its estimate: counted in full; both limits see it.
    expect(await service.spend.settle({ reservationId: a.reservationId!, costMicroUsd: 700_000 })).toEqual({
      reservationId: a.reservationId,
      state: "settled",
    });
    // A second settle (e.g. the usage event after the API call) changes nothing.
    await service.spend.settle({ reservationId: a.reservationId!, costMicroUsd: 700_000 });
    await service.spend.release({ reservationId: other.reservationId! });

    let status = await spendingLimitStatus(db(), "org_scope");
    const byId = (id: string) => status.items.find((i) => i.limitId === id)!;
    expect(byId(prjLimit.id)).toMatchObject({ spentUsd: 0.7, reservedUsd: 0, state: "ok" });
    expect(byId(orgLimit.id)).toMatchObject({ spentUsd: 0.7, reservedUsd: 0, state: "ok" });

    // Usage carrying an active reservation settles it on ingestion.
    const b = await service.spend.reserve({ orgId: "org_scope", projectId: "prj_small", estimatedMicroUsd: 100_000 });
    await storeUsageRecords(db(), { pricing: new Pricing(), spend: new SpendLedger(db()) }, [
      usageEvent({
        orgId: "org_scope",
        projectId: "prj_small",
        costMicroUsd: 150_000,
        reservationId: b.reservationId!,
      }),
    ]);
    status = await spendingLimitStatus(db(), "org_scope");
    expect(byId(prjLimit.id)).toMatchObject({ spentUsd: 0.85, reservedUsd: 0, state: "warning" });

    // An unsettled reservation expires: its hold becomes spend at the estimate.
    const c = await service.spend.reserve({ orgId: "org_scope", projectId: "prj_small", estimatedMicroUsd: 100_000 });
    expect(c.decision).toBe("allowed");
    // Judged a second later (the reservations of this suite live 200 ms).
    expect(await service.expireReservations(new Date(Date.now() + 1000))).toBe(1);
    status = await spendingLimitStatus(db(), "org_scope");
    expect(byId(prjLimit.id)).toMatchObject({ reservedUsd: 0 });
    expect(byId(prjLimit.id).spentUsd).toBeCloseTo(0.95, 9);
    // Settling after expiry counts the call once, at its real cost instead of the estimate.
    await service.spend.settle({ reservationId: c.reservationId!, costMicroUsd: 50_000 });
    status = await spendingLimitStatus(db(), "org_scope");
    expect(byId(prjLimit.id).spentUsd).toBeCloseTo(0.9, 9);

    // Raising the amount re-bases the alert state.
    await updateSpendingLimit(...asOwner(database, "org_scope"), { limitId: prjLimit.id, amountUsd: 10 });
    status = await spendingLimitStatus(db(), "org_scope");
    expect(byId(prjLimit.id)).toMatchObject({ state: "ok", remainingUsd: 9.1 });
  });
});
