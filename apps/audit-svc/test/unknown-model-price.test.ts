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

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`a model absent from the price table is never free${pg.reason}`, () => {
  let database: Database;
  let drop: () => Promise<void>;
  let service: AuditService;
  const db = () => database.forSchema<AuditDb>(AUDIT_SCHEMA);

  beforeAll(async () => {
    const created = await createTestDatabase("unknown_price");
    drop = created.drop;
    database = await openDatabase(created.url, { max: 4 });
    service = await startAudit(database, new MemoryBus(), {});
  });
  afterAll(async () => {
    await service?.close();
    await database?.close();
    await drop?.();
  });

  it("counts the runtime's default model and an unknown model toward a limit, and says which were estimated", async () => {
    await createSpendingLimit(...asOwner(database, "org_unknown"), {
      amountUsd: 10,
      period: "monthly",
      alertThresholds: [],
    });
    const warnings: object[] = [];
    const deps = {
      pricing: new Pricing(),
      spend: new SpendLedger(db()),
      logger: { warn: (obj: object) => void warnings.push(obj) },
    };
    const tokens = { inputTokens: 1000, outputTokens: 1000 };
    await storeUsageRecords(db(), deps, [
      usageEvent({ orgId: "org_unknown", model: "claude-sonnet-4-6", ...tokens }),
      usageEvent({ orgId: "org_unknown", model: "claude-future-9", ...tokens }),
      usageEvent({ orgId: "org_unknown", model: "claude-future-9", ...tokens }),
    ]);
    // Sonnet 4.6 at $3/$15; the unknown Claude model as the dearest Claude (Opus 4.1, $15/$75), twice.
    const expected = 18_000 + 2 * 90_000;
    const status = await spendingLimitStatus(db(), "org_unknown");
    expect(status.items[0]?.spentUsd).toBeCloseTo(expected / 1e6, 9);
    const window = { from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 3_600_000) };
    const byModel = await usageCosts(db(), "org_unknown", window, "model");
    expect(byModel.total).toMatchObject({ requests: 3, costMicroUsd: expected, fallbackPricedRequests: 2 });
    expect(byModel.groups.map((g) => [g.key, g.fallbackPricedRequests])).toEqual([
      ["claude-future-9", 2],
      ["claude-sonnet-4-6", 0],
    ]);
    // One warning per model, not one per call.
    expect(warnings).toEqual([{ model: "claude-future-9", chargedAs: "claude-opus-4-1" }]);
  });
});
