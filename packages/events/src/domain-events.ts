import { AUDIT_RECORDED, type AuditRecorded, auditPrincipal, newId, type Principal } from "@agentplane/contracts";
import type { Kysely, Transaction } from "kysely";
import type { Outbox } from "./outbox.ts";

/** A change a service made, as it goes into the audit trail. */
export interface DomainEvent {
  action: string;
  orgId?: string | null | undefined;
  projectId?: string | undefined;
  targetType: string;
  targetId: string;
  targets?: Record<string, string>;
  outcome?: AuditRecorded["outcome"];
  details?: Record<string, unknown> | undefined;
  requestId?: string | undefined;
}

/** The `audit.recorded` payload of a domain event. */
export function domainAuditRecord(principal: Principal | undefined, event: DomainEvent): AuditRecorded {
  return {
    id: newId("audit"),
    principal: auditPrincipal(principal),
    action: event.action,
    source: "domain",
    targetType: event.targetType,
    targetId: event.targetId,
    targets: event.targets ?? {},
    outcome: event.outcome ?? "success",
    time: new Date().toISOString(),
    ...(event.orgId ? { orgId: event.orgId } : {}),
    ...(event.projectId ? { projectId: event.projectId } : {}),
    ...(event.details ? { details: event.details } : {}),
    ...(event.requestId ? { requestId: event.requestId } : {}),
  };
}

/**
 * What the domain-event helpers need of a service: its database and its outbox, which they ask to
 * publish now after a commit. Every service context has both, so each passes its own context.
 */
export interface DomainEventContext<DB> {
  db: Kysely<DB>;
  outbox: Outbox;
}

/**
 * Writes an `audit.recorded` domain record to the outbox inside `trx`, the transaction of the
 * change it describes: the record exists exactly when the change does, and the relay publishes it
 * once the bus accepts it. The request never waits for (or fails because of) the bus.
 */
export async function recordDomainEvent<DB>(
  ctx: { outbox: Outbox },
  trx: Transaction<DB> | Kysely<DB>,
  principal: Principal | undefined,
  event: DomainEvent,
): Promise<AuditRecorded> {
  return enqueueAuditRecord(ctx, trx, domainAuditRecord(principal, event));
}

/** Writes a ready `audit.recorded` record to the outbox inside `trx` (see `recordDomainEvent`). */
export async function enqueueAuditRecord<DB>(
  ctx: { outbox: Outbox },
  trx: Transaction<DB> | Kysely<DB>,
  record: AuditRecorded,
): Promise<AuditRecorded> {
  await ctx.outbox.enqueue(trx as unknown as Kysely<never>, AUDIT_RECORDED, record, {
    id: record.id,
    time: record.time,
  });
  return record;
}

/**
 * A record with no change of its own behind it (a denial, a policy decision at a proxy): written
 * to the outbox alone, then the relay is asked to publish it now.
 */
export async function recordStandaloneEvent(
  ctx: { outbox: Outbox },
  principal: Principal | undefined,
  event: DomainEvent,
  /** Hands the write to the relay; by default at once (`relaySoon`). */
  relay: () => void = () => ctx.outbox.relaySoon(),
): Promise<AuditRecorded> {
  const record = domainAuditRecord(principal, event);
  await ctx.outbox.publish(AUDIT_RECORDED, record, { id: record.id, time: record.time });
  relay();
  return record;
}

/**
 * Runs `fn` in one transaction of the service's database and, once it has committed, asks the
 * relay to publish what it recorded now rather than at its next poll.
 */
export async function withDomainEvents<DB, T>(
  ctx: DomainEventContext<DB>,
  fn: (trx: Transaction<DB>) => Promise<T>,
): Promise<T> {
  const result = await ctx.db.transaction().execute(fn);
  ctx.outbox.relaySoon();
  return result;
}
