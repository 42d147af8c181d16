import { databaseTargets } from "@agentplane/db/testing";
import { MemoryBus } from "@agentplane/events";
import { canonicalModel, Pricing } from "@agentplane/pricing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_SCHEMA, type AuditService } from "../src/app.ts";
import type { AuditDb } from "../src/db/schema.ts";
import { auditTrailStats, auditTrailTimeseries } from "../src/services/audit-analytics.ts";
import { listAuditTrail, storeAuditRecords } from "../src/services/audit-records.ts";
import { SpendLedger } from "../src/services/spend.ts";
import { storeUsageRecords, usageCosts, usageCostTimeseries } from "../src/services/usage.ts";
import { auditEvent, startAudit, usageEvent } from "./helpers.ts";

const targets = await databaseTargets();

describe.each(targets)("audit analytics on $name $reason", (target) => {
  let opened: Awaited<ReturnType<typeof target.open>>;
  let service: AuditService;
  const db = () => opened.database.forSchema<AuditDb>(AUDIT_SCHEMA);

  beforeAll(async () => {
    if (!target.available) return;
    opened = await target.open();
    service = await startAudit(opened.database, new MemoryBus(), { retentionDays: 30 });
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await opened?.cleanup();
  });

  it.skipIf(!target.available)("zero-fills hourly and daily timeseries and counts only inside the window", async () => {
    await storeAuditRecords(db(), [
      auditEvent({ orgId: "org_ts", time: "2026-02-10T09:15:00.000Z" }),
      auditEvent({ orgId: "org_ts", time: "2026-02-10T09:45:00.000Z", outcome: "denied", status: 403 }),
      auditEvent({ orgId: "org_ts", time: "2026-02-10T12:00:00.000Z", outcome: "error", status: 500 }),
      auditEvent({ orgId: "org_ts", time: "2026-02-10T14:00:00.000Z" }),
      auditEvent({ orgId: "org_other", time: "2026-02-10T10:00:00.000Z" }),
    ]);
    const hourly = await auditTrailTimeseries(
      db(),
      "org_ts",
      { from: new Date("2026-02-10T08:30:00Z"), to: new Date("2026-02-10T13:00:00Z") },
      "hour",
    );
    expect(hourly.buckets).toEqual([
      { start: "2026-02-10T08:00:00.000Z", count: 0, denied: 0, error: 0 },
      { start: "2026-02-10T09:00:00.000Z", count: 2, denied: 1, error: 0 },
      { start: "2026-02-10T10:00:00.000Z", count: 0, denied: 0, error: 0 },
      { start: "2026-02-10T11:00:00.000Z", count: 0, denied: 0, error: 0 },
      { start: "2026-02-10T12:00:00.000Z", count: 1, denied: 0, error: 1 },
    ]);
    const daily = await auditTrailTimeseries(
      db(),
      "org_ts",
      { from: new Date("2026-02-08T00:00:00Z"), to: new Date("2026-02-12T00:00:00Z") },
      "day",
    );
    expect(daily.buckets.map((b) => b.count)).toEqual([0, 0, 4, 0]);
    await expect(
      auditTrailTimeseries(
        db(),
        "org_ts",
        { from: new Date("2026-01-01T00:00:00Z"), to: new Date("2026-03-01T00:00:00Z") },
        "hour",
      ),
    ).rejects.toMatchObject({ status: 400 });
  });

  it.skipIf(!target.available)("counts stats by action, outcome and actor type for a window", async () => {
    await storeAuditRecords(db(), [
      auditEvent({ orgId: "org_stats", time: "2026-02-01T10:00:00.000Z", action: "createProject" }),
      auditEvent({ orgId: "org_stats", time: "2026-02-01T11:00:00.000Z", action: "createProject" }),
      auditEvent({
        orgId: "org_stats",
        time: "2026-02-01T12:00:00.000Z",
        action: "deleteProject",
        outcome: "denied",
        principal: { type: "api_token", id: "tok_1" },
      }),
      auditEvent({ orgId: "org_stats", time: "2026-02-02T12:00:00.000Z", action: "member.removed", source: "domain" }),
    ]);
    const day1 = await auditTrailStats(db(), "org_stats", {
      from: new Date("2026-02-01T00:00:00Z"),
      to: new Date("2026-02-02T00:00:00Z"),
    });
    expect(day1.total).toBe(3);
    expect(day1.byAction).toEqual([
      { key: "createProject", count: 2 },
      { key: "deleteProject", count: 1 },
    ]);
    expect(day1.byOutcome).toEqual([
      { key: "denied", count: 1 },
      { key: "success", count: 2 },
    ]);
    expect(day1.byActorType).toEqual([
      { key: "api_token", count: 1 },
      { key: "user", count: 2 },
    ]);
    const both = await auditTrailStats(db(), "org_stats", {
      from: new Date("2026-02-01T11:00:00Z"),
      to: new Date("2026-02-03T00:00:00Z"),
    });
    expect(both.total).toBe(3);
    expect(both.byAction.find((a) => a.key === "member.removed")?.count).toBe(1);
  });

  it.skipIf(!target.available)("filters the trail and keeps records without an organization", async () => {
    await storeAuditRecords(db(), [
      auditEvent({
        orgId: "org_filter",
        action: "a",
        principal: { type: "user", id: "usr_x" },
        targetType: "team",
        targetId: "team_1",
      }),
      auditEvent({ orgId: "org_filter", action: "b", outcome: "denied" }),
      auditEvent({ orgId: undefined, principal: { type: "anonymous" }, outcome: "denied", status: 401 }),
    ]);
    const base = { limit: 50 };
    expect((await listAuditTrail(db(), "org_filter", base)).items).toHaveLength(2);
    expect((await listAuditTrail(db(), "org_filter", { ...base, actor: "usr_x" })).items.map((i) => i.action)).toEqual([
      "a",
    ]);
    expect(
      (await listAuditTrail(db(), "org_filter", { ...base, outcome: "denied" })).items.map((i) => i.action),
    ).toEqual(["b"]);
    expect(
      (await listAuditTrail(db(), "org_filter", { ...base, targetType: "team", targetId: "team_1" })).items,
    ).toHaveLength(1);
    const orphans = await db().selectFrom("audit_records").select("event_id").where("org_id", "is", null).execute();
    expect(orphans.length).toBeGreaterThanOrEqual(1);
  });

  it.skipIf(!target.available)("prunes records older than the retention period", async () => {
    const now = new Date("2026-06-01T00:00:00Z");
    await storeAuditRecords(db(), [
      auditEvent({ orgId: "org_old", time: "2026-04-15T00:00:00.000Z" }),
      auditEvent({ orgId: "org_old", time: "2026-05-01T23:59:59.000Z" }),
      auditEvent({ orgId: "org_old", time: "2026-05-02T00:00:01.000Z" }),
      auditEvent({ orgId: undefined, time: "2026-04-01T00:00:00.000Z", principal: { type: "anonymous" } }),
    ]);
    const before = await db()
      .selectFrom("audit_records")
      .select("event_id")
      .where("ts", "<", "2026-05-02T00:00:00Z")
      .execute();
    const deleted = await service.prune(now);
    expect(deleted).toBe(before.length);
    const left = await listAuditTrail(db(), "org_old", { limit: 10 });
    expect(left.items.map((i) => i.occurredAt)).toEqual(["2026-05-02T00:00:01.000000Z"]);
  });

  it.skipIf(!target.available)(
    "prices uncached input, cache reads, cache writes and output at their own rates",
    async () => {
      const pricing = new Pricing();
      // Sonnet 4.5: $3 input, $15 output, $0.30 cache read, $3.75 cache write per million tokens.
      // 1,200×3 + 350×15 + 50,000×0.3 + 8,000×3.75 = 3,600 + 5,250 + 15,000 + 30,000 = 53,850 µUSD.
      expect(
        pricing.cost("claude-sonnet-4-5-20250929", {
          inputTokens: 1200,
          outputTokens: 350,
          cacheReadTokens: 50_000,
          cacheWriteTokens: 8000,
        }),
      ).toBe(53_850);
      // Opus 4.1 through a Bedrock inference profile: 100×15 + 20×75 + 1,000×1.5 + 100×18.75 = 6,375.
      expect(
        pricing.cost("us.anthropic.claude-opus-4-1-20250805-v1:0", {
          inputTokens: 100,
          outputTokens: 20,
          cacheReadTokens: 1000,
          cacheWriteTokens: 100,
        }),
      ).toBe(6375);
      // Haiku 3.5: 7×0.8 + 3×4 + 11×0.08 = 5.6 + 12 + 0.88 = 18.48 → 18.
      expect(
        pricing.cost("claude-3-5-haiku-20241022", {
          inputTokens: 7,
          outputTokens: 3,
          cacheReadTokens: 11,
          cacheWriteTokens: 0,
        }),
      ).toBe(18);
      expect(canonicalModel("claude-sonnet-4-5@20250929")).toBe("claude-sonnet-4-5");
      expect(canonicalModel("global.anthropic.claude-haiku-4-5-20251001-v1:0")).toBe("claude-haiku-4-5");
      // Configuration overrides the bundled price.
      const custom = new Pricing({ "claude-sonnet-4-5": { input: 6, output: 22.5, cacheRead: 0.6, cacheWrite: 7.5 } });
      expect(
        custom.cost("claude-sonnet-4-5", {
          inputTokens: 1000,
          outputTokens: 0,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
        }),
      ).toBe(6000);
      expect(
        pricing.cost("some-other-model", { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }),
      ).toBeUndefined();
      // Asked again, a name resolved through its canonical form (or to no price) answers the same.
      for (let i = 0; i < 2; i++) {
        expect(pricing.price("global.anthropic.claude-haiku-4-5-20251001-v1:0")).toBe(
          pricing.price("claude-haiku-4-5"),
        );
        expect(pricing.price("some-other-model")).toBeUndefined();
      }
    },
  );

  it.skipIf(!target.available)("groups usage costs and zero-fills the cost timeseries", async () => {
    const deps = { pricing: new Pricing(), spend: new SpendLedger(db()) };
    const events = [
      usageEvent({
        orgId: "org_use",
        projectId: "prj_a",
        time: "2026-03-03T10:00:00.000Z",
        inputTokens: 1200,
        outputTokens: 350,
        cacheReadTokens: 50_000,
        cacheWriteTokens: 8000,
      }),
      usageEvent({
        orgId: "org_use",
        projectId: "prj_b",
        time: "2026-03-05T10:00:00.000Z",
        provider: "bedrock",
        model: "us.anthropic.claude-opus-4-1-20250805-v1:0",
        inputTokens: 100,
        outputTokens: 20,
        cacheReadTokens: 1000,
        cacheWriteTokens: 100,
      }),
      usageEvent({ orgId: "org_use", projectId: "prj_a", time: "2026-03-05T11:00:00.000Z", costMicroUsd: 1000 }),
    ];
    expect(await storeUsageRecords(db(), deps, events)).toBe(3);
    expect(await storeUsageRecords(db(), deps, events)).toBe(0);
    const window = { from: new Date("2026-03-01T00:00:00Z"), to: new Date("2026-04-01T00:00:00Z") };
    const byProject = await usageCosts(db(), "org_use", window, "project");
    expect(byProject.total.costMicroUsd).toBe(53_850 + 6375 + 1000);
    expect(byProject.total.cacheReadTokens).toBe(51_000);
    expect(byProject.groups.map((g) => [g.key, g.costMicroUsd, g.requests])).toEqual([
      ["prj_a", 54_850, 2],
      ["prj_b", 6375, 1],
    ]);
    const byProvider = await usageCosts(db(), "org_use", window, "provider");
    expect(byProvider.groups.map((g) => g.key)).toEqual(["anthropic", "bedrock"]);
    const byDay = await usageCosts(db(), "org_use", window, "day");
    expect(byDay.groups.map((g) => [g.key, g.costMicroUsd])).toEqual([
      ["2026-03-03", 53_850],
      ["2026-03-05", 7375],
    ]);
    const series = await usageCostTimeseries(
      db(),
      "org_use",
      { from: new Date("2026-03-02T00:00:00Z"), to: new Date("2026-03-06T00:00:00Z") },
      "day",
    );
    expect(series.buckets.map((b) => b.costMicroUsd)).toEqual([0, 53_850, 0, 7375]);
    expect(series.buckets[1]?.costUsd).toBeCloseTo(0.05385, 10);
  });
});
