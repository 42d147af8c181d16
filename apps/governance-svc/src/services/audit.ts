import { AUDIT_RECORDED, type AuditRecorded, auditPrincipal, newId, type Principal } from "@agentplane/contracts";
import type { Kysely, Transaction } from "kysely";
import type { GovernanceContext } from "../context.ts";
import type { GovernanceDb } from "../db/schema.ts";

export interface DomainEvent {
  action: string;
  orgId?: string | undefined;
  projectId?: string | undefined;
  targetType: string;
  targetId: string;
  outcome?: AuditRecorded["outcome"];
  details?: Record<string, unknown>;
  requestId?: string | undefined;
}

function record(principal: Principal | undefined, event: DomainEvent): AuditRecorded {
  return {
    id: newId("audit"),
    principal: auditPrincipal(principal),
    action: event.action,
    source: "domain",
    targetType: event.targetType,
    targetId: event.targetId,
    targets: {},
    outcome: event.outcome ?? "success",
    time: new Date().toISOString(),
    ...(event.orgId ? { orgId: event.orgId } : {}),
    ...(event.projectId ? { projectId: event.projectId } : {}),
    ...(event.details ? { details: event.details } : {}),
    ...(event.requestId ? { requestId: event.requestId } : {}),
  };
}

/** Writes an `audit.recorded` record to the outbox inside `trx`, the transaction of the change. */
export async function recordDomainEvent(
  ctx: GovernanceContext,
  trx: Kysely<GovernanceDb>,
  principal: Principal | undefined,
  event: DomainEvent,
): Promise<void> {
  const data = record(principal, event);
  await ctx.outbox.enqueue(trx as unknown as Kysely<never>, AUDIT_RECORDED, data, { id: data.id, time: data.time });
}

/** An audit record with no change behind it (a denial): written to the outbox on its own. */
export async function recordEvent(ctx: GovernanceContext, principal: Principal | undefined, event: DomainEvent) {
  const data = record(principal, event);
  await ctx.outbox.publish(AUDIT_RECORDED, data, { id: data.id, time: data.time });
  ctx.relaySoon();
}

/** Runs `fn` in a transaction and asks the relay to publish what it recorded once it committed. */
export async function withDomainEvents<T>(
  ctx: GovernanceContext,
  fn: (trx: Transaction<GovernanceDb>) => Promise<T>,
): Promise<T> {
  const result = await ctx.db.transaction().execute(fn);
  ctx.relaySoon();
  return result;
}

/** Postgres unique violation (duplicate name within a scope). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.code === "23505" || e?.cause?.code === "23505";
}
