import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import type { Database } from "@agentplane/db";
import { type Bus, domainAuditRecord, type Outbox, recordDomainEvent, withDomainEvents } from "@agentplane/events";
import type { Authorizer, Caller, Logger, ServiceClient } from "@agentplane/service-kit";
import type { Kysely, Transaction } from "kysely";
import type { SandboxDB } from "../db/schema.ts";
import type { SandboxDriver } from "../driver/types.ts";

export interface SandboxServiceConfig {
  /** Base URL sandboxes use to call the platform (AGENTPLANE_API_URL in their environment). */
  apiUrl?: string;
  ingressHost?: string;
  /** How often idle sandboxes and sessions are looked for (ms). */
  idleCheckIntervalMs?: number;
  sessionIdleMs?: number;
  /** How often a driver's garbage collection runs (ms, default 60 s; Kubernetes only). */
  gcIntervalMs?: number;
}

/** Everything a service verb needs; built once in createSandboxService. */
export interface SandboxDeps {
  db: Kysely<SandboxDB>;
  database: Database;
  bus: Bus;
  /** Durable path for audit records (the service's outbox); the bus directly when absent. */
  outbox?: Outbox;
  driver: SandboxDriver;
  authorizer: Authorizer;
  logger: Logger;
  config: SandboxServiceConfig;
  /** governance-svc's decision API; no policy enforcement when absent. */
  governance?: ServiceClient;
}

/**
 * Runs a change and the audit records it writes (`audit(…, trx)`) in one transaction: the records
 * exist exactly when the change does; the relay publishes them once it has committed.
 */
export function withAudit<T>(deps: SandboxDeps, fn: (trx: Transaction<SandboxDB>) => Promise<T>): Promise<T> {
  return withDomainEvents({ db: deps.db, relaySoon: () => deps.outbox?.relaySoon() }, fn);
}

/**
 * Records a domain audit event. With `trx` (inside `withAudit`) it is written to the outbox in the
 * transaction of the change and fails with it. Without, for steps that are not one transaction
 * (a driver start, a command run), it is written to the outbox right after (kept and retried while
 * the bus is down), or published directly when no outbox is configured, and never fails the request.
 */
export async function audit(
  deps: SandboxDeps,
  caller: Caller,
  record: {
    action: string;
    projectId?: string;
    orgId?: string | null;
    targetType: string;
    targetId: string;
    outcome?: AuditRecorded["outcome"];
    details?: Record<string, unknown>;
  },
  trx?: Kysely<SandboxDB>,
): Promise<void> {
  const domainEvent = {
    action: record.action,
    orgId: record.orgId ?? (caller.orgId || undefined),
    projectId: record.projectId,
    targetType: record.targetType,
    targetId: record.targetId,
    targets: { [`${record.targetType}Id`]: record.targetId },
    outcome: record.outcome ?? "success",
    details: record.details,
    requestId: caller.requestId,
  };
  if (trx && deps.outbox) {
    await recordDomainEvent({ outbox: deps.outbox }, trx, caller.principal, domainEvent);
    return;
  }
  const event: AuditRecorded = domainAuditRecord(caller.principal, domainEvent);
  try {
    if (deps.outbox) {
      await deps.outbox.publish(AUDIT_RECORDED, event, { id: event.id, time: event.time });
      deps.outbox.flush().catch(() => {});
    } else {
      await deps.bus.publish(AUDIT_RECORDED, event, { id: event.id });
    }
  } catch (err) {
    deps.logger.warn({ err, action: record.action }, "audit event not published");
  }
}

/** The system acting on its own in an organization (idle stop, reconciliation). */
export function systemCaller(orgId: string | null): Caller {
  return { principal: { type: "service", id: "svc_sandbox", displayName: "sandbox" }, orgId: orgId ?? "" };
}
