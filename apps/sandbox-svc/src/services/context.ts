import type { AuditRecorded, ObjectLimits } from "@agentplane/contracts";
import type { Database } from "@agentplane/db";
import { type Bus, type DomainEvent, type Outbox, recordDomainEvent, recordStandaloneEvent } from "@agentplane/events";
import type { Authorizer, Caller, Logger, ServiceClient } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { SandboxDB } from "../db/schema.ts";
import type { SandboxDriver } from "../driver/types.ts";

export interface SandboxServiceConfig {
  /** Base URL sandboxes use to call the platform (AGENTPLANE_API_URL in their environment). */
  apiUrl?: string;
  ingressHost?: string;
  /** How long an exposed port may take to answer a request once it is sent (ms, default 60 s). */
  ingressTimeoutMs?: number;
  /** How many connections one sandbox's ports may have open through the ingress at once (default 256). */
  ingressMaxConnections?: number;
  /** How often idle sandboxes and sessions are looked for (ms). */
  idleCheckIntervalMs?: number;
  sessionIdleMs?: number;
  /** How often a driver's garbage collection runs (ms, default 60 s; Kubernetes only). */
  gcIntervalMs?: number;
  /** How many sandboxes a project keeps and an organization runs at once (`OBJECT_LIMITS`; defaults otherwise). */
  objectLimits?: ObjectLimits;
  /** How many started creates are built at once before they are decided (early-starts.ts; default 16). */
  earlyStarts?: number;
  /** How long archiving a workspace may take before it is given up (ms, default 5 min). */
  archiveTimeoutMs?: number;
}

/** Everything a service verb needs; built once in createSandboxService. */
export interface SandboxDeps {
  db: Kysely<SandboxDB>;
  database: Database;
  bus: Bus;
  /** Audit records are written here inside the transaction of the change they describe. */
  outbox: Outbox;
  driver: SandboxDriver;
  authorizer: Authorizer;
  logger: Logger;
  config: SandboxServiceConfig;
  /** governance-svc's decision API; no policy enforcement when absent. */
  governance?: ServiceClient;
}

/** What happened to a sandbox (or one of its tokens), as its domain event records it. */
export interface SandboxEvent {
  action: string;
  projectId?: string;
  orgId?: string | null;
  targetType: string;
  targetId: string;
  outcome?: AuditRecorded["outcome"];
  details?: Record<string, unknown>;
}

function domainEvent(caller: Caller, event: SandboxEvent): DomainEvent {
  return {
    action: event.action,
    orgId: event.orgId ?? (caller.orgId || undefined),
    projectId: event.projectId,
    targetType: event.targetType,
    targetId: event.targetId,
    targets: { [`${event.targetType}Id`]: event.targetId },
    outcome: event.outcome ?? "success",
    details: event.details,
    requestId: caller.requestId,
  };
}

/**
 * Records a sandbox's domain event in `trx`, the transaction of the change (run it in
 * `withDomainEvents(deps, …)`): the record exists exactly when the change does, and a failure to
 * write it fails the change.
 */
export async function recordSandboxEvent(
  deps: SandboxDeps,
  trx: Kysely<SandboxDB>,
  caller: Caller,
  event: SandboxEvent,
): Promise<void> {
  await recordDomainEvent(deps, trx, caller.principal, domainEvent(caller, event));
}

/**
 * Records an event with no row change behind it (a command that ran): one write to the outbox,
 * kept and retried while the bus is down. A failure to write it fails the caller.
 */
export async function recordSandboxEventAlone(deps: SandboxDeps, caller: Caller, event: SandboxEvent): Promise<void> {
  await recordStandaloneEvent(deps, caller.principal, domainEvent(caller, event));
}

/**
 * How long after it is written a record that ends a request (a start's, a command's) is handed to
 * the outbox relay; it is in the outbox, durable, from the write on. Not in the turns right after
 * it: the relay's statements would run while the answer is still on its way out (through the
 * gateway, in the same process all-in-one) or just as the client's next request arrives, and
 * delay them (on the embedded database they run on this thread).
 */
export const RECORD_RELAY_DELAY_MS = 30;

/** Asks the relay to publish what was just written once `RECORD_RELAY_DELAY_MS` have passed. */
export function relayShortly(deps: Pick<SandboxDeps, "outbox">): void {
  setTimeout(() => deps.outbox.relaySoon(), RECORD_RELAY_DELAY_MS).unref();
}

/**
 * Records what a command did (no row changes with it): one write to the outbox, delivered at once
 * while the bus is up, else kept and retried. The relay's round that follows the write (it clears
 * the delivered row, or delivers a kept one) runs shortly after (`relayShortly`), not in the turns
 * of the answer. A failure to write it fails the caller.
 */
export async function recordCommandEvent(deps: SandboxDeps, caller: Caller, event: SandboxEvent): Promise<void> {
  await recordStandaloneEvent(deps, caller.principal, domainEvent(caller, event), () => relayShortly(deps));
}

/**
 * Records an event with no change of its own behind it (a refused connection): written to the
 * outbox alone (kept and retried while the bus is down) and never failing the request.
 */
export async function recordStandaloneSandboxEvent(
  deps: SandboxDeps,
  caller: Caller,
  event: SandboxEvent,
): Promise<void> {
  try {
    await recordSandboxEventAlone(deps, caller, event);
  } catch (err) {
    deps.logger.warn({ err, action: event.action }, "audit event not recorded");
  }
}

/** The system acting on its own in an organization (idle stop, reconciliation). */
export function systemCaller(orgId: string | null): Caller {
  return { principal: { type: "service", id: "svc_sandbox", displayName: "sandbox" }, orgId: orgId ?? "" };
}
