import type { Database } from "@agentplane/db";
import { openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { Pricing } from "@agentplane/pricing";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AUDIT_SCHEMA, type AuditService } from "../src/app.ts";
import type { AuditDb } from "../src/db/schema.ts";
import { SpendLedger } from "../src/services/spend.ts";
import { createSpendingLimit, spendingLimitStatus, updateSpendingLimit } from "../src/services/spending-limits.ts";
import { periodOf } from "../src/services/time.ts";
import { storeUsageRecords } from "../src/services/usage.ts";
import { asOwner, startAudit, usageEvent } from "./helpers.ts";

const pg = await requirePostgres();

/**
 * Holds a limit's counter row locked in a transaction of its own until `release`: whoever needs
 * that counter meanwhile waits there, as the milliseconds between two of its steps would let it.
 */
async function holdCounter(db: Kysely<AuditDb>, limitId: string, periodStart: Date) {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked = () => {};
  const held = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const transaction = db.transaction().execute(async (trx) => {
    await trx
      .selectFrom("spend_counters")
      .select("limit_id")
      .where("limit_id", "=", limitId)
      .where("period_start", "=", periodStart)
      .forUpdate()
      .execute();
    locked();
    await released;
  });
  await held;
  return {
    release: async () => {
      release();
      await transaction;
    },
  };
}

/** Sessions of this database waiting for a lock. */
const lockWaits = async (db: Kysely<AuditDb>) =>
  Number(
    (
      await sql<{ n: string }>`select count(*) as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`.execute(db)
    ).rows[0]?.n,
  );

// Calls in flight when a limit's period changes end against the counter of the new period that
// applies now: their cost counts there, and no counter keeps a hold that nothing will release.
describe.skipIf(!pg.available)(`a limit's period changed with calls in flight${pg.reason}`, () => {
  let database: Database;
  let drop: () => Promise<void>;
  let service: AuditService;
  const db = () => database.forSchema<AuditDb>(AUDIT_SCHEMA);
  const status = async (orgId: string) => (await spendingLimitStatus(db(), orgId)).items[0];
  const settle = (orgId: string, reservationId: string, costMicroUsd: number) =>
    storeUsageRecords(db(), { pricing: new Pricing(), spend: new SpendLedger(db()) }, [
      usageEvent({ orgId, projectId: "prj_1", costMicroUsd, reservationId }),
    ]);

  beforeAll(async () => {
    const created = await createTestDatabase("spend_period_change");
    drop = created.drop;
    database = await openDatabase(created.url, { max: 5 });
    service = await startAudit(database, new MemoryBus());
  });
  afterAll(async () => {
    await service?.close();
    await database?.close();
    await drop?.();
  });

  /**
   * A monthly limit of $1 whose month's counter exists (a call reserved and released) and is held
   * locked by another transaction until `blocker.release`.
   */
  async function monthlyLimitHeld(orgId: string) {
    const limit = await createSpendingLimit(...asOwner(database, orgId), {
      amountUsd: 1,
      period: "monthly",
      alertThresholds: [],
    });
    const first = await service.spend.reserve({ orgId, projectId: "prj_1", estimatedMicroUsd: 100_000 });
    await service.spend.release({ reservationId: first.reservationId! });
    const blocker = await holdCounter(db(), limit.id, periodOf("monthly", new Date()).start);
    return { limit, blocker };
  }

  it("a call held under a monthly limit that became daily counts today, and its hold moves with it", async () => {
    const orgId = "org_to_daily";
    const limit = await createSpendingLimit(...asOwner(database, orgId), {
      amountUsd: 1,
      period: "monthly",
      alertThresholds: [],
    });
    const held = await service.spend.reserve({ orgId, projectId: "prj_1", estimatedMicroUsd: 200_000 });
    expect(held.decision).toBe("allowed");
    await updateSpendingLimit(...asOwner(database, orgId), { limitId: limit.id, period: "daily" });
    expect(await status(orgId)).toMatchObject({ period: "daily", spentUsd: 0, reservedUsd: 0.2 });
    await settle(orgId, held.reservationId!, 150_000);
    expect(await status(orgId)).toMatchObject({ spentUsd: 0.15, reservedUsd: 0 });
  });

  it("a call released after a change leaves no hold behind on the old period's counter", async () => {
    const orgId = "org_round_trip";
    const limit = await createSpendingLimit(...asOwner(database, orgId), {
      amountUsd: 1,
      period: "daily",
      alertThresholds: [],
    });
    const held = await service.spend.reserve({ orgId, projectId: "prj_1", estimatedMicroUsd: 300_000 });
    const other = await service.spend.reserve({ orgId, projectId: "prj_1", estimatedMicroUsd: 100_000 });
    await updateSpendingLimit(...asOwner(database, orgId), { limitId: limit.id, period: "monthly" });
    expect(await status(orgId)).toMatchObject({ period: "monthly", reservedUsd: 0.4 });
    await service.spend.release({ reservationId: held.reservationId! });
    // The other call still holds its own estimate, not less.
    expect(await status(orgId)).toMatchObject({ reservedUsd: 0.1 });
    await updateSpendingLimit(...asOwner(database, orgId), { limitId: limit.id, period: "daily" });
    expect(await status(orgId)).toMatchObject({ period: "daily", reservedUsd: 0.1 });
    await service.spend.release({ reservationId: other.reservationId! });
    expect(await status(orgId)).toMatchObject({ spentUsd: 0, reservedUsd: 0 });
    // All of the limit is there to reserve again.
    const full = await service.spend.reserve({ orgId, projectId: "prj_1", estimatedMicroUsd: 1_000_000 });
    expect(full.decision).toBe("allowed");
  });

  it("a call reserved as the period changes holds on the counter of the period in force", async () => {
    const orgId = "org_mid_change";
    // Holding the month's counter stops a reservation right after it has read the limit, as the
    // milliseconds between the two would; the period changes while it waits there.
    const { limit, blocker } = await monthlyLimitHeld(orgId);
    const reserving = service.spend.reserve({ orgId, projectId: "prj_1", estimatedMicroUsd: 200_000 });
    await vi.waitFor(async () => expect(await lockWaits(db())).toBe(1), { timeout: 5_000, interval: 20 });
    let changed = false;
    const changing = updateSpendingLimit(...asOwner(database, orgId), { limitId: limit.id, period: "daily" }).then(
      () => {
        changed = true;
      },
    );
    // The change either ends (nothing orders it after the call) or waits for the call to end.
    await vi.waitFor(async () => expect(changed || (await lockWaits(db())) === 2).toBe(true), {
      timeout: 5_000,
      interval: 20,
    });
    await blocker.release();
    const held = await reserving;
    await changing;
    expect(held.decision).toBe("allowed");
    const hold = await db()
      .selectFrom("reservation_holds")
      .select("period_start")
      .where("reservation_id", "=", held.reservationId!)
      .executeTakeFirstOrThrow();
    expect(new Date(hold.period_start).toISOString()).toBe(periodOf("daily", new Date()).start.toISOString());
    expect(await status(orgId)).toMatchObject({ period: "daily", reservedUsd: 0.2 });
    await service.spend.release({ reservationId: held.reservationId! });
    expect(await status(orgId)).toMatchObject({ spentUsd: 0, reservedUsd: 0 });
  });
  it("usage recorded as the period changes counts on the counter of the period in force", async () => {
    const orgId = "org_usage_mid_change";
    const { limit, blocker } = await monthlyLimitHeld(orgId);
    // A call's usage, reserved for nothing: stored, then stopped at the month's counter it read.
    const recording = storeUsageRecords(db(), { pricing: new Pricing(), spend: new SpendLedger(db()) }, [
      usageEvent({ orgId, projectId: "prj_1", costMicroUsd: 150_000 }),
    ]);
    await vi.waitFor(async () => expect(await lockWaits(db())).toBe(1), { timeout: 5_000, interval: 20 });
    let changed = false;
    const changing = updateSpendingLimit(...asOwner(database, orgId), { limitId: limit.id, period: "daily" }).then(
      () => {
        changed = true;
      },
    );
    await vi.waitFor(async () => expect(changed || (await lockWaits(db())) === 2).toBe(true), {
      timeout: 5_000,
      interval: 20,
    });
    // Had the change gone through, the day's counter would start now, from the usage stored so far.
    if (changed) {
      const next = await service.spend.reserve({ orgId, projectId: "prj_1", estimatedMicroUsd: 100_000 });
      await service.spend.release({ reservationId: next.reservationId! });
    }
    await blocker.release();
    await recording;
    await changing;
    expect(await status(orgId)).toMatchObject({ period: "daily", spentUsd: 0.15, reservedUsd: 0 });
  });
});
