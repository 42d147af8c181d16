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
 * Writes an `audit.recorded` domain record to the outbox inside `trx`, the transaction of the
 * change it describes: the record exists exactly when the change does, and the relay publishes it
 * once the bus accepts it. The request never waits for (or fails because of) the bus.
 */
export async function recordDomainEvent<DB>(
  outbox: Outbox,
  trx: Kysely<DB>,
  principal: Principal | undefined,
  event: DomainEvent,
): Promise<AuditRecorded> {
  const record = domainAuditRecord(principal, event);
  await outbox.enqueue(trx as unknown as Kysely<never>, AUDIT_RECORDED, record, { id: record.id, time: record.time });
  return record;
}

/**
 * Runs `fn` in one transaction of `db` and, once it has committed, asks the relay (the outbox, or a
 * service's own wrapper of it) to publish what it recorded now rather than at its next poll.
 */
export async function withDomainEvents<DB, T>(
  db: Kysely<DB>,
  relay: Pick<Outbox, "relaySoon">,
  fn: (trx: Transaction<DB>) => Promise<T>,
): Promise<T> {
  const result = await db.transaction().execute(fn);
  relay.relaySoon();
  return result;
}
