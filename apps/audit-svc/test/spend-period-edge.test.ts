import type { Database } from "@agentplane/db";
import { openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { Pricing } from "@agentplane/pricing";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_SCHEMA, type AuditService } from "../src/app.ts";
import type { AuditDb } from "../src/db/schema.ts";
import { SpendLedger } from "../src/services/spend.ts";
import { lockCounter } from "../src/services/spend-counters.ts";
import { createSpendingLimit, spendingLimitStatus } from "../src/services/spending-limits.ts";
import { periodOf } from "../src/services/time.ts";
import { storeUsageRecords } from "../src/services/usage.ts";
import { asOwner, startAudit, usageEvent } from "./helpers.ts";

const pg = await requirePostgres();

// A call reserved just before a period ends and reported just after it (or reported with a clock a
// little behind audit's) is counted in the period of its hold, and in that one only.
describe.skipIf(!pg.available)(`a call across a period boundary${pg.reason}`, () => {
  let database: Database;
  let drop: () => Promise<void>;
  let service: AuditService;
  const db = () => database.forSchema<AuditDb>(AUDIT_SCHEMA);

  beforeAll(async () => {
    const created = await createTestDatabase("spend_period_edge");
    drop = created.drop;
    database = await openDatabase(created.url, { max: 5 });
    service = await startAudit(database, new MemoryBus());
  });
  afterAll(async () => {
    await service?.close();
    await database?.close();
    await drop?.();
  });

  it("counts a held call once, in its hold's period, whatever its event time", async () => {
    const orgId = "org_edge";
    const limit = await createSpendingLimit(...asOwner(database, orgId), {
      amountUsd: 1,
      period: "daily",
      alertThresholds: [],
    });
    const held = await service.spend.reserve({ orgId, projectId: "prj_1", estimatedMicroUsd: 200_000 });
    expect(held.decision).toBe("allowed");
    const today = periodOf("daily", new Date());
    // The call ended a second into the next day.
    const tomorrow = new Date(today.end.getTime() + 1000);
    await storeUsageRecords(db(), { pricing: new Pricing(), spend: new SpendLedger(db()) }, [
      usageEvent({
        orgId,
        projectId: "prj_1",
        costMicroUsd: 150_000,
        reservationId: held.reservationId!,
        time: tomorrow.toISOString(),
      }),
    ]);
    expect((await spendingLimitStatus(db(), orgId)).items[0]).toMatchObject({ spentUsd: 0.15, reservedUsd: 0 });
    // Tomorrow, before anything touched its counter, and once a reservation has created it.
    expect((await spendingLimitStatus(db(), orgId, tomorrow)).items[0]).toMatchObject({ spentUsd: 0 });
    const row = await db()
      .selectFrom("spending_limits")
      .selectAll()
      .where("id", "=", limit.id)
      .executeTakeFirstOrThrow();
    const counter = await db()
      .transaction()
      .execute((trx) => lockCounter(trx, row, tomorrow));
    expect(counter.spent).toBe(0);
  });
});
