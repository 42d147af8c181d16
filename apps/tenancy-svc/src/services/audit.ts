import { AUDIT_RECORDED, type AuditRecorded, auditPrincipal, newId, type Principal } from "@agentplane/contracts";
import type { Kysely, Transaction } from "kysely";
import type { TenancyContext } from "../context.ts";
import type { TenancyDatabase } from "../db/schema.ts";

export interface DomainEvent {
  action: string;
  orgId?: string | undefined;
  projectId?: string | undefined;
  targetType: string;
  targetId: string;
  details?: Record<string, unknown>;
  requestId?: string | undefined;
}

/**
 * Writes an `audit.recorded` domain record to the outbox inside `trx`, the transaction of the
 * change it describes: the record exists exactly when the change does, and the relay publishes it
 * once the bus accepts it. The request never waits for (or fails because of) the bus.
 */
export async function recordDomainEvent(
  ctx: TenancyContext,
  trx: Kysely<TenancyDatabase>,
  principal: Principal | undefined,
  event: DomainEvent,
): Promise<void> {
  const record: AuditRecorded = {
    id: newId("audit"),
    principal: auditPrincipal(principal),
    action: event.action,
    source: "domain",
    targetType: event.targetType,
    targetId: event.targetId,
    targets: {},
    outcome: "success",
    time: new Date().toISOString(),
    ...(event.orgId ? { orgId: event.orgId } : {}),
    ...(event.projectId ? { projectId: event.projectId } : {}),
    ...(event.details ? { details: event.details } : {}),
    ...(event.requestId ? { requestId: event.requestId } : {}),
  };
  await ctx.outbox.enqueue(trx as unknown as Kysely<never>, AUDIT_RECORDED, record, {
    id: record.id,
    time: record.time,
  });
}

/** Runs `fn` in a transaction and, once it has committed, asks the relay to publish what it recorded. */
export async function withDomainEvents<T>(
  ctx: TenancyContext,
  fn: (trx: Transaction<TenancyDatabase>) => Promise<T>,
): Promise<T> {
  const result = await ctx.db.transaction().execute(fn);
  ctx.relaySoon();
  return result;
}
