import type { AuditRecorded, UsageRecorded } from "@agentplane/contracts";
import type { Database } from "@agentplane/db";
import { type Bus, createOutbox, MemoryBus } from "@agentplane/events";
import { type Authorizer, type Caller, generateInternalKeys, silentLogger } from "@agentplane/service-kit";
import { AUDIT_SCHEMA, type AuditService, createAuditService } from "../src/app.ts";
import type { AuditConfig } from "../src/config.ts";
import type { AuditDb } from "../src/db/schema.ts";
import type { SpendingLimitsContext } from "../src/services/spending-limits.ts";

export function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const tick = async () => {
      try {
        if (await check()) return resolve();
      } catch {
        // the condition may touch a service that is briefly unavailable; ask again
      }
      if (Date.now() - start > timeoutMs) return reject(new Error("timed out"));
      setTimeout(tick, 50);
    };
    void tick();
  });
}

let seq = 0;
export function auditEvent(overrides: Partial<AuditRecorded> = {}): AuditRecorded {
  seq++;
  return {
    id: `evt-${process.pid}-${Date.now().toString(36)}-${seq}`,
    orgId: "org_a",
    principal: { type: "user", id: "usr_1", displayName: "Ada" },
    action: "createProject",
    source: "request",
    targetType: "project",
    targetId: `prj_${seq}`,
    targets: {},
    outcome: "success",
    status: 201,
    time: new Date().toISOString(),
    ...overrides,
  };
}

export function usageEvent(overrides: Partial<UsageRecorded> = {}): UsageRecorded {
  seq++;
  return {
    id: `use-${process.pid}-${Date.now().toString(36)}-${seq}`,
    orgId: "org_a",
    projectId: "prj_1",
    principalType: "user",
    principalId: "usr_1",
    provider: "anthropic",
    model: "claude-sonnet-4-5-20250929",
    route: "/v1/llm/anthropic/v1/messages",
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    time: new Date().toISOString(),
    ...overrides,
  };
}

/** Authorizes nobody: for suites that call the service's verbs directly rather than its routes. */
export const noRoutes: Authorizer = {
  check: async () => ({ decision: "not_found" }),
};

export async function startAudit(
  database: Database,
  bus: Bus,
  config: AuditConfig = {},
  authorizer: Authorizer = noRoutes,
): Promise<AuditService> {
  const keys = await generateInternalKeys();
  return createAuditService({
    database,
    bus,
    keys,
    logger: silentLogger(),
    authorizer,
    config: { maintenance: false, ...config },
  });
}

export { OwnRedis } from "@agentplane/testkit";

/**
 * The context of a spending-limit verb over `database` (its events stay in the outbox table: no
 * relay runs) and an owner of `orgId` calling it: `createSpendingLimit(...asOwner(db, "org_a"), input)`.
 */
export function asOwner(database: Database, orgId: string): [SpendingLimitsContext, Caller] {
  const ctx = {
    db: database.forSchema<AuditDb>(AUDIT_SCHEMA),
    outbox: createOutbox({ database, schema: AUDIT_SCHEMA, bus: new MemoryBus() }),
  };
  return [ctx, { principal: { type: "user", id: "usr_owner" }, orgId, orgRole: "owner" }];
}
