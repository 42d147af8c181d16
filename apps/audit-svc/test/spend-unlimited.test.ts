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
import { storeUsageRecords } from "../src/services/usage.ts";
import { asOwner, startAudit } from "./helpers.ts";

/** The call a reservation names (what its expiry turns into a usage record of). */
const call = {
  principalType: "user",
  principalId: "usr_1",
  provider: "cloud-b",
  model: "m",
  route: "/llm/cloud-b",
};

const pg = await requirePostgres();

// Without any limit the hold is one insert; as soon as a limit applies, reservations lock its counter.
describe.skipIf(!pg.available)(`reservations of an organization without limits${pg.reason}`, () => {
  let database: Database;
  let drop: () => Promise<void>;
  let service: AuditService;
  const db = () => database.forSchema<AuditDb>(AUDIT_SCHEMA);

  beforeAll(async () => {
    const created = await createTestDatabase("spend_unlimited");
    drop = created.drop;
    database = await openDatabase(created.url, { max: 5 });
    service = await startAudit(database, new MemoryBus());
  });
  afterAll(async () => {
    await service?.close();
    await database?.close();
    await drop?.();
  });

  it("holds without a limit, then counts against a limit created for the project", async () => {
    const free = await service.spend.reserve({ orgId: "org_free", projectId: "prj_a", estimatedMicroUsd: 700, call });
    expect(free).toMatchObject({ decision: "allowed", reservationId: expect.stringMatching(/.+/) });
    const row = await db()
      .selectFrom("reservations")
      .selectAll()
      .where("id", "=", free.reservationId!)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ org_id: "org_free", project_id: "prj_a", state: "active" });
    expect(Number(row.amount_micro_usd)).toBe(700);
    expect(typeof row.call === "string" ? JSON.parse(row.call) : row.call).toEqual(call);
    expect(await db().selectFrom("reservation_holds").selectAll().execute()).toEqual([]);

    // A limit of another project does not apply; one of this project does.
    await createSpendingLimit(...asOwner(database, "org_free"), {
      amountUsd: 1,
      period: "daily",
      projectId: "prj_b",
      alertThresholds: [],
    });
    const stillFree = await service.spend.reserve({ orgId: "org_free", projectId: "prj_a", estimatedMicroUsd: 1 });
    expect(stillFree.decision).toBe("allowed");
    expect(stillFree.remainingMicroUsd).toBeUndefined();
    const limit = await createSpendingLimit(...asOwner(database, "org_free"), {
      amountUsd: 0.001,
      period: "daily",
      projectId: "prj_a",
      alertThresholds: [],
    });
    const held = await service.spend.reserve({ orgId: "org_free", projectId: "prj_a", estimatedMicroUsd: 600 });
    expect(held).toMatchObject({ decision: "allowed", remainingMicroUsd: 400 });
    const over = await service.spend.reserve({ orgId: "org_free", projectId: "prj_a", estimatedMicroUsd: 600 });
    expect(over).toMatchObject({ decision: "denied", limitId: limit.id });
    const status = await spendingLimitStatus(db(), "org_free");
    expect(status.items.find((i) => i.limitId === limit.id)?.reservedUsd).toBeCloseTo(0.0006, 9);
  });

  it("records calls opened without a reservation, says where a limit applies, and counts them toward a limit created meanwhile", async () => {
    const ledger = new SpendLedger(db());
    await createSpendingLimit(...asOwner(database, "org_open"), {
      amountUsd: 1,
      period: "daily",
      projectId: "prj_l",
      alertThresholds: [],
    });
    const opened = await ledger.open({
      reservations: [
        { reservationId: "rsv_open_free", orgId: "org_open", projectId: "prj_f", estimatedMicroUsd: 900, call },
        { reservationId: "rsv_open_lim", orgId: "org_open", projectId: "prj_l", estimatedMicroUsd: 900, call },
      ],
    });
    expect(opened.items).toEqual([
      { reservationId: "rsv_open_free", limited: false },
      { reservationId: "rsv_open_lim", limited: true },
    ]);
    // A retried batch changes nothing; the rows are active and hold nothing against limits.
    await ledger.open({
      reservations: [
        { reservationId: "rsv_open_free", orgId: "org_open", projectId: "prj_f", estimatedMicroUsd: 1, call },
      ],
    });
    const rows = await db().selectFrom("reservations").selectAll().where("org_id", "=", "org_open").execute();
    expect(rows.map((r) => [r.id, r.state, Number(r.amount_micro_usd)]).sort()).toEqual([
      ["rsv_open_free", "active", 900],
      ["rsv_open_lim", "active", 900],
    ]);
    expect(
      await db().selectFrom("reservation_holds").selectAll().where("reservation_id", "like", "rsv_open%").execute(),
    ).toEqual([]);

    // A limit created while the call ran: its usage event settles it and counts toward the limit, once.
    const late = await createSpendingLimit(...asOwner(database, "org_open"), {
      amountUsd: 1,
      period: "daily",
      alertThresholds: [],
    });
    const usage = {
      orgId: "org_open",
      principalType: "user",
      principalId: "usr_1",
      provider: "cloud-b",
      model: "m",
      route: "/llm/cloud-b",
      inputTokens: 1,
      outputTokens: 1,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costMicroUsd: 250,
      time: new Date().toISOString(),
    };
    const deps = { pricing: new Pricing(), spend: ledger };
    for (let i = 0; i < 2; i++) {
      await storeUsageRecords(db(), deps, [
        { ...usage, id: "evt_open_free", projectId: "prj_f", reservationId: "rsv_open_free" },
        { ...usage, id: "evt_open_lim", projectId: "prj_l", reservationId: "rsv_open_lim" },
      ]);
    }
    const status = await spendingLimitStatus(db(), "org_open");
    expect(status.items.find((i) => i.limitId === late.id)).toMatchObject({ spentUsd: 0.0005, reservedUsd: 0 });
    expect(status.items.find((i) => i.projectId === "prj_l")).toMatchObject({ spentUsd: 0.00025, reservedUsd: 0 });
    const states = await db().selectFrom("reservations").select("state").where("org_id", "=", "org_open").execute();
    expect(states.map((s) => s.state)).toEqual(["settled", "settled"]);
  });
});
