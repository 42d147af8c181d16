import { AUDIT_RECORDED, type AuditRecorded, auditPrincipal, newId, type Principal } from "@agentplane/contracts";
import type { Kysely, Transaction } from "kysely";
import type { ConnectionsContext } from "../context.ts";
import type { ConnectionsDb } from "../db/schema/index.ts";

export interface DomainEvent {
  action: string;
  orgId?: string | undefined;
  projectId?: string | undefined;
  targetType: string;
  targetId: string;
  outcome?: AuditRecorded["outcome"];
  /** Attributes of the change or decision; never secrets, tokens or request bodies. */
  details?: Record<string, unknown>;
  requestId?: string | undefined;
}

function toRecord(principal: Principal | undefined, event: DomainEvent): AuditRecorded {
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

/** Writes an `audit.recorded` domain record to the outbox inside `trx`, the transaction of the change. */
export async function recordDomainEvent(
  ctx: ConnectionsContext,
  trx: Kysely<ConnectionsDb>,
  principal: Principal | undefined,
  event: DomainEvent,
): Promise<void> {
  const record = toRecord(principal, event);
  await ctx.outbox.enqueue(trx as unknown as Kysely<never>, AUDIT_RECORDED, record, {
    id: record.id,
    time: record.time,
  });
}

/** A record with no state change of its own (a policy decision at a proxy): written to the outbox alone. */
export async function recordDecision(
  ctx: ConnectionsContext,
  principal: Principal | undefined,
  event: DomainEvent,
): Promise<void> {
  await recordDomainEvent(ctx, ctx.db, principal, event);
  ctx.relaySoon();
}

/** Runs `fn` in a transaction and, once it has committed, asks the relay to publish what it recorded. */
export async function withDomainEvents<T>(
  ctx: ConnectionsContext,
  fn: (trx: Transaction<ConnectionsDb>) => Promise<T>,
): Promise<T> {
  const result = await ctx.db.transaction().execute(fn);
  ctx.relaySoon();
  return result;
}
