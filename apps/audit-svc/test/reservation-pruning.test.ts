import type { Database } from "@agentplane/db";
import { databaseTargets } from "@agentplane/db/testing";
import { MemoryBus } from "@agentplane/events";
import { Pricing } from "@agentplane/pricing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_SCHEMA, type AuditService } from "../src/app.ts";
import { configFromEnv } from "../src/config.ts";
import type { AuditDb } from "../src/db/schema.ts";
import { SpendLedger } from "../src/services/spend.ts";
import { createSpendingLimit, spendingLimitStatus } from "../src/services/spending-limits.ts";
import { storeUsageRecords, usageCosts } from "../src/services/usage.ts";
import { asOwner, startAudit, usageEvent } from "./helpers.ts";

const targets = await databaseTargets();
const DAY = 24 * 3_600_000;

// A reservation is opened for nearly every model call; once it has ended, it is kept a while
// (a late usage report still finds it) and then deleted, with its holds.
describe.each(targets)("pruning finished reservations on $name $reason", (target) => {
  let database: Database;
  let cleanup: () => Promise<void>;
  let service: AuditService;
  const db = () => database.forSchema<AuditDb>(AUDIT_SCHEMA);
  const age = (id: string, days: number) =>
    db()
      .updateTable("reservations")
      .set({ created_at: new Date(Date.now() - days * DAY) })
      .where("id", "=", id)
      .execute();
  const ids = async () =>
    (await db().selectFrom("reservations").select("id").orderBy("id").execute()).map((r) => r.id).sort();

  beforeAll(async () => {
    if (!target.available) return;
    ({ database, cleanup } = await target.open());
    service = await startAudit(database, new MemoryBus(), { reservationTtlMs: 150, maintenance: false });
  });
  afterAll(async () => {
    await service?.close();
    await cleanup?.();
  });

  it.skipIf(!target.available)(
    "deletes ended reservations older than the retention with their holds, and keeps the rest",
    async () => {
      await createSpendingLimit(...asOwner(database, "org_p"), {
        amountUsd: 10,
        period: "monthly",
        alertThresholds: [],
      });
      const reserve = async () =>
        (await service.spend.reserve({ orgId: "org_p", estimatedMicroUsd: 1000 })).reservationId as string;
      const settledOld = await reserve();
      const releasedOld = await reserve();
      const expiredOld = await reserve();
      const activeOld = await reserve();
      const settledNew = await reserve();
      await service.spend.settle({ reservationId: settledOld, costMicroUsd: 700 });
      await service.spend.release({ reservationId: releasedOld });
      await service.spend.settle({ reservationId: settledNew, costMicroUsd: 700 });
      // The active one is kept far from its expiry first: with a 150 ms TTL a slow machine would
      // expire it too before the sweep below.
      await db()
        .updateTable("reservations")
        .set({ expires_at: new Date(Date.now() + DAY) })
        .where("id", "=", activeOld)
        .execute();
      await db()
        .updateTable("reservations")
        .set({ expires_at: new Date(0) })
        .where("id", "=", expiredOld)
        .execute();
      expect(await service.expireReservations()).toBe(1);
      for (const id of [settledOld, releasedOld, expiredOld, activeOld]) await age(id, 8);
      await age(settledNew, 6);
      const holdsOf = async (id: string) =>
        Number(
          (
            await db()
              .selectFrom("reservation_holds")
              .select(sql<number>`count(*)`.as("n"))
              .where("reservation_id", "=", id)
              .executeTakeFirstOrThrow()
          ).n,
        );
      expect(await holdsOf(settledOld)).toBe(1);
      const spentBefore = (await spendingLimitStatus(db(), "org_p")).items[0]?.spentUsd;

      expect(await service.pruneReservations()).toBe(3);
      expect(await ids()).toEqual([activeOld, settledNew].sort());
      expect(await holdsOf(settledOld)).toBe(0);
      // What they counted stays counted; nothing left to do on a second run.
      expect((await spendingLimitStatus(db(), "org_p")).items[0]?.spentUsd).toBe(spentBefore);
      expect(await service.pruneReservations()).toBe(0);
      // Seven days on, the reservation settled a day later goes too; the active one never does.
      expect(await service.pruneReservations(new Date(Date.now() + 2 * DAY))).toBe(1);
      expect(await ids()).toEqual([activeOld]);
    },
  );

  it.skipIf(!target.available)("RESERVATION_RETENTION_DAYS sets how long finished reservations are kept", async () => {
    expect(configFromEnv({}).reservationRetentionMs).toBe(7 * DAY);
    const short = await startAudit(database, new MemoryBus(), {
      ...configFromEnv({ RESERVATION_RETENTION_DAYS: "2" }),
      maintenance: false,
    });
    try {
      const { reservationId } = await service.spend.reserve({ orgId: "org_d", estimatedMicroUsd: 10 });
      await service.spend.release({ reservationId: reservationId as string });
      await age(reservationId as string, 3);
      expect(await service.pruneReservations()).toBe(0);
      expect(await short.pruneReservations()).toBe(1);
    } finally {
      await short.close();
    }
    expect(() => configFromEnv({ RESERVATION_RETENTION_DAYS: "0" })).toThrow(/RESERVATION_RETENTION_DAYS/);
  });

  it.skipIf(!target.available)(
    "a usage report redelivered after its reservation was pruned is stored and counted once",
    async () => {
      await createSpendingLimit(...asOwner(database, "org_r"), {
        amountUsd: 10,
        period: "monthly",
        alertThresholds: [],
      });
      const { reservationId } = await service.spend.reserve({ orgId: "org_r", estimatedMicroUsd: 5000 });
      const deps = { pricing: new Pricing(), spend: new SpendLedger(db()) };
      const report = usageEvent({ orgId: "org_r", projectId: undefined, costMicroUsd: 4000, reservationId });
      await storeUsageRecords(db(), deps, [report]);
      await age(reservationId as string, 8);
      expect(await service.pruneReservations()).toBe(1);

      expect(await storeUsageRecords(db(), deps, [report])).toBe(0);
      const window = { from: new Date(Date.now() - DAY), to: new Date(Date.now() + DAY) };
      expect((await usageCosts(db(), "org_r", window, "project")).total).toMatchObject({
        requests: 1,
        costMicroUsd: 4000,
      });
      expect((await spendingLimitStatus(db(), "org_r")).items[0]).toMatchObject({ spentUsd: 0.004, reservedUsd: 0 });
    },
  );

  it.skipIf(!target.available)(
    "finds old reservations through the block-range index on their creation time",
    async () => {
      // With a handful of rows the planner scans the table; with scans off it shows the index can serve.
      const plan = await database.kysely.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx);
        return sql<{ "QUERY PLAN": string }>`explain (costs off)
        select id from ${sql.table(`${AUDIT_SCHEMA}.reservations`)}
        where created_at < now() - interval '7 days' and state <> 'active' limit 5000`.execute(trx);
      });
      expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("reservations_created_brin");
    },
  );
});
