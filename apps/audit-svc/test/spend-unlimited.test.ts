import type { Database } from "@agentplane/db";
import { openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_SCHEMA, type AuditService } from "../src/app.ts";
import type { AuditDb } from "../src/db/schema.ts";
import { createSpendingLimit, spendingLimitStatus } from "../src/services/spending-limits.ts";
import { startAudit } from "./helpers.ts";

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
    const call = {
      principalType: "user",
      principalId: "usr_1",
      provider: "cloud-b",
      model: "m",
      route: "/llm/cloud-b",
    };
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
    await createSpendingLimit(db(), "org_free", {
      amountUsd: 1,
      period: "daily",
      projectId: "prj_b",
      alertThresholds: [],
    });
    const stillFree = await service.spend.reserve({ orgId: "org_free", projectId: "prj_a", estimatedMicroUsd: 1 });
    expect(stillFree.decision).toBe("allowed");
    expect(stillFree.remainingMicroUsd).toBeUndefined();
    const limit = await createSpendingLimit(db(), "org_free", {
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
});
