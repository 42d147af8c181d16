import { type Database, migrateToLatest } from "@agentplane/db";
import { databaseTargets } from "@agentplane/db/testing";
import { MemoryBus } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_SCHEMA, type AuditService } from "../src/app.ts";
import { migrations } from "../src/db/migrations/index.ts";
import type { AuditDb } from "../src/db/schema.ts";
import { createSpendingLimit, listSpendingLimits, updateSpendingLimit } from "../src/services/spending-limits.ts";
import { asOwner, startAudit } from "./helpers.ts";

const targets = await databaseTargets();

async function conflictOf(promise: Promise<unknown>): Promise<ProblemError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProblemError);
  expect((err as ProblemError).status).toBe(409);
  return err as ProblemError;
}

// One limit per scope (the organization, or one project) and period: the index decides, so two
// concurrent creates cannot both succeed.
describe.each(targets)("one spending limit per scope and period on $name $reason", (target) => {
  let database: Database;
  let cleanup: () => Promise<void>;
  let service: AuditService;

  beforeAll(async () => {
    if (!target.available) return;
    ({ database, cleanup } = await target.open());
    service = await startAudit(database, new MemoryBus());
  });
  afterAll(async () => {
    await service?.close();
    await cleanup?.();
  });

  it.skipIf(!target.available)("lets one of many concurrent creates of a scope succeed", async () => {
    const results = await Promise.allSettled(
      [10, 20, 30, 40, 50].map((amountUsd) =>
        createSpendingLimit(...asOwner(database, "org_race"), { amountUsd, period: "monthly", alertThresholds: [] }),
      ),
    );
    const created = results.filter((r) => r.status === "fulfilled");
    expect(created).toHaveLength(1);
    const winner = (created[0] as PromiseFulfilledResult<{ id: string }>).value;
    for (const r of results.filter((x) => x.status === "rejected")) {
      const err = (r as PromiseRejectedResult).reason as ProblemError;
      expect(err.status).toBe(409);
      expect(err.extensions.existingLimitId).toBe(winner.id);
    }
    expect((await listSpendingLimits(database.forSchema<AuditDb>(AUDIT_SCHEMA), "org_race")).map((l) => l.id)).toEqual([
      winner.id,
    ]);
  });

  it.skipIf(!target.available)("keeps the other scopes and periods apart", async () => {
    const as = asOwner(database, "org_scopes");
    const monthly = await createSpendingLimit(...as, { amountUsd: 10, period: "monthly", alertThresholds: [] });
    await createSpendingLimit(...as, { amountUsd: 1, period: "daily", alertThresholds: [] });
    await createSpendingLimit(...as, { amountUsd: 5, period: "monthly", projectId: "prj_a", alertThresholds: [] });
    await createSpendingLimit(...as, { amountUsd: 5, period: "monthly", projectId: "prj_b", alertThresholds: [] });
    await createSpendingLimit(...asOwner(database, "org_other"), {
      amountUsd: 10,
      period: "monthly",
      alertThresholds: [],
    });
    const project = await conflictOf(
      createSpendingLimit(...as, { amountUsd: 7, period: "monthly", projectId: "prj_a", alertThresholds: [] }),
    );
    expect(project.detail).toContain("project prj_a");
    // Changing the amount of the one that holds the scope is the way; moving another onto it is not.
    expect((await updateSpendingLimit(...as, { limitId: monthly.id, amountUsd: 12 })).amountUsd).toBe(12);
    const daily = (await listSpendingLimits(database.forSchema<AuditDb>(AUDIT_SCHEMA), "org_scopes")).find(
      (l) => l.period === "daily",
    )!;
    const moved = await conflictOf(updateSpendingLimit(...as, { limitId: daily.id, period: "monthly" }));
    expect(moved.extensions.existingLimitId).toBe(monthly.id);
  });
});

// A database written before the rule may hold duplicates: the migration keeps the strictest of
// each group and moves the others aside instead of failing.
describe.each(targets)("the migration to one limit per scope on $name $reason", (target) => {
  let database: Database;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    if (!target.available) return;
    ({ database, cleanup } = await target.open());
  });
  afterAll(async () => {
    await cleanup?.();
  });

  it.skipIf(!target.available)("keeps the strictest limit of each duplicate group", async () => {
    const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0006"));
    await migrateToLatest(database, AUDIT_SCHEMA, before);
    const db = database.forSchema<AuditDb>(AUDIT_SCHEMA);
    const limit = (
      id: string,
      amount: number,
      projectId: string | null = null,
      period: "monthly" | "daily" = "monthly",
    ) => ({
      id,
      org_id: "org_dup",
      project_id: projectId,
      amount_micro_usd: amount,
      period,
      alert_thresholds: "[80]",
    });
    await db
      .insertInto("spending_limits")
      .values([
        limit("lim_1", 50_000_000),
        limit("lim_2", 20_000_000), // the strictest org-wide monthly limit
        limit("lim_3", 20_000_000), // as strict, created later
        limit("lim_4", 5_000_000, "prj_a"),
        limit("lim_5", 9_000_000, "prj_a"),
        limit("lim_6", 1_000_000, null, "daily"),
      ])
      .execute();
    await db
      .insertInto("spend_counters")
      .values({ limit_id: "lim_1", period_start: new Date("2026-11-01T00:00:00Z"), spent_micro_usd: 1 })
      .execute();

    expect(await migrateToLatest(database, AUDIT_SCHEMA, migrations)).toEqual(["0006_one_limit_per_scope"]);
    const left = await db.selectFrom("spending_limits").select("id").orderBy("id").execute();
    expect(left.map((r) => r.id)).toEqual(["lim_2", "lim_4", "lim_6"]);
    const moved = await db
      .selectFrom("spending_limit_duplicates")
      .select(["id", "kept_id", "amount_micro_usd", "alert_thresholds"])
      .orderBy("id")
      .execute();
    expect(moved.map((r) => [r.id, r.kept_id, Number(r.amount_micro_usd)])).toEqual([
      ["lim_1", "lim_2", 50_000_000],
      ["lim_3", "lim_2", 20_000_000],
      ["lim_5", "lim_4", 9_000_000],
    ]);
    // Stored as the JSON array it was, whichever way the driver hands jsonb over.
    const thresholds = moved[0]!.alert_thresholds as unknown;
    expect(typeof thresholds === "string" ? JSON.parse(thresholds) : thresholds).toEqual([80]);
    expect(await db.selectFrom("spend_counters").select("limit_id").execute()).toEqual([]);
    // From now on the index refuses a duplicate.
    await conflictOf(
      createSpendingLimit(...asOwner(database, "org_dup"), { amountUsd: 1, period: "monthly", alertThresholds: [] }),
    );
  });
});

// Postgres only (PGlite has one connection): a replica of the previous version that creates a
// duplicate while the migration runs waits for the migration, instead of making it fail.
describe.skipIf(!targets[0]!.available)(`the migration under a concurrent create${targets[0]!.reason}`, () => {
  let database: Database;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ database, cleanup } = await targets[0]!.open());
  });
  afterAll(async () => {
    await cleanup?.();
  });

  it("dedupes a duplicate committed while it runs", async () => {
    await migrateToLatest(
      database,
      AUDIT_SCHEMA,
      Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0006")),
    );
    const db = database.forSchema<AuditDb>(AUDIT_SCHEMA);
    const row = (id: string, amount: number) => ({
      id,
      org_id: "org_live",
      project_id: null,
      amount_micro_usd: amount,
      period: "monthly" as const,
      alert_thresholds: "[]",
    });
    await db.insertInto("spending_limits").values(row("lim_old", 7_000_000)).execute();
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let inserted!: () => void;
    const insertedYet = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const writer = db.transaction().execute(async (trx) => {
      await trx.insertInto("spending_limits").values(row("lim_new", 3_000_000)).execute();
      inserted();
      await released;
    });
    await insertedYet;
    const migrated = migrateToLatest(database, AUDIT_SCHEMA, migrations);
    // Let the migration reach the table while the other write is still open, then commit it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    release();
    await writer;
    expect(await migrated).toEqual(["0006_one_limit_per_scope"]);
    const left = await db.selectFrom("spending_limits").select("id").where("org_id", "=", "org_live").execute();
    expect(left.map((r) => r.id)).toEqual(["lim_new"]);
    const moved = await db.selectFrom("spending_limit_duplicates").select(["id", "kept_id"]).execute();
    expect(moved).toEqual([{ id: "lim_old", kept_id: "lim_new" }]);
  });
});
