import { type Database, migrateToLatest, openDatabase } from "@agentplane/db";
import { Pricing } from "@agentplane/pricing";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_SCHEMA } from "../src/app.ts";
import { migrations } from "../src/db/migrations/index.ts";
import type { AuditDb } from "../src/db/schema.ts";
import { SpendLedger } from "../src/services/spend.ts";
import { createSpendingLimit, spendingLimitStatus } from "../src/services/spending-limits.ts";
import { storeUsageRecords } from "../src/services/usage.ts";
import { asOwner } from "./helpers.ts";

const call = { principalType: "user", principalId: "usr_1", provider: "cloud-b", model: "m", route: "/llm/cloud-b" };
const usage = (id: string, orgId: string, costMicroUsd: number, reservationId?: string) => ({
  id,
  orgId,
  projectId: "prj_1",
  principalType: "user",
  principalId: "usr_1",
  provider: "cloud-b",
  model: "m",
  route: "/llm/cloud-b",
  inputTokens: 1,
  outputTokens: 1,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costMicroUsd,
  ...(reservationId ? { reservationId } : {}),
  time: new Date().toISOString(),
});

const pg = await requirePostgres();

// A usage batch is stored in one transaction whose common case is one statement: these cases
// take every branch of it in one batch.
describe.skipIf(!pg.available)(`a batch of usage events${pg.reason}`, () => {
  let database: Database;
  let drop: () => Promise<void>;
  const db = () => database.forSchema<AuditDb>(AUDIT_SCHEMA);

  beforeAll(async () => {
    const created = await createTestDatabase("usage_batch");
    drop = created.drop;
    database = await openDatabase(created.url, { max: 5 });
    await migrateToLatest(database, AUDIT_SCHEMA, migrations);
  });
  afterAll(async () => {
    await database?.close();
    await drop?.();
  });

  it("settles each reservation once and counts every record once, whatever its reservation", async () => {
    const ledger = new SpendLedger(db());
    const deps = { pricing: new Pricing(), spend: ledger };
    // Opened while no limit applied (holds nothing), then a limit, then a reservation holding against it.
    await ledger.open({
      reservations: [{ reservationId: "rsv_unheld", orgId: "org_b", projectId: "prj_1", estimatedMicroUsd: 900, call }],
    });
    const limit = await createSpendingLimit(...asOwner(database, "org_b"), {
      amountUsd: 1,
      period: "daily",
      alertThresholds: [],
    });
    const held = await ledger.reserve({ orgId: "org_b", projectId: "prj_1", estimatedMicroUsd: 5000, call });
    expect(held.decision).toBe("allowed");
    await ledger.open({
      reservations: [
        { reservationId: "rsv_free", orgId: "org_free", projectId: "prj_1", estimatedMicroUsd: 900, call },
      ],
    });

    const batch = [
      usage("evt_unheld", "org_b", 100, "rsv_unheld"),
      usage("evt_held", "org_b", 200, held.reservationId),
      // The producer recorded the call by its usage event alone: audit never had the reservation.
      usage("evt_never", "org_b", 400, "rsv_never_opened"),
      usage("evt_none", "org_b", 800),
      usage("evt_free", "org_free", 1600, "rsv_free"),
      usage("evt_free_never", "org_free", 3200, "rsv_free_never_opened"),
    ];
    expect(await storeUsageRecords(db(), deps, batch)).toBe(6);
    // Redelivered, alone and within a new batch: nothing changes.
    expect(await storeUsageRecords(db(), deps, [batch[0]!, usage("evt_later", "org_b", 10)])).toBe(1);
    // The same where no limit applies (the one-statement path): the new record is stored, the
    // redelivered ones change neither their records nor the settled reservation.
    expect(
      await storeUsageRecords(db(), deps, [
        { ...batch[4]!, costMicroUsd: 9 },
        { ...batch[5]!, costMicroUsd: 9 },
        usage("evt_free_later", "org_free", 20, "rsv_free_later_never_opened"),
      ]),
    ).toBe(1);

    const status = await spendingLimitStatus(db(), "org_b");
    expect(status.items.find((i) => i.limitId === limit.id)).toMatchObject({
      spentUsd: (100 + 200 + 400 + 800 + 10) / 1e6,
      reservedUsd: 0,
    });
    const reservations = await db()
      .selectFrom("reservations")
      .select(["id", "state", "settled_micro_usd"])
      .orderBy("id")
      .execute();
    expect(reservations.map((r) => [r.id, r.state, Number(r.settled_micro_usd)])).toEqual(
      [
        [held.reservationId, "settled", 200],
        ["rsv_free", "settled", 1600],
        ["rsv_unheld", "settled", 100],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    const records = await db()
      .selectFrom("usage_records")
      .select(["event_id", "cost_micro_usd"])
      .orderBy("event_id")
      .execute();
    expect(records.map((r) => [r.event_id, Number(r.cost_micro_usd)])).toEqual([
      ["evt_free", 1600],
      ["evt_free_later", 20],
      ["evt_free_never", 3200],
      ["evt_held", 200],
      ["evt_later", 10],
      ["evt_never", 400],
      ["evt_none", 800],
      ["evt_unheld", 100],
    ]);
  });
});
