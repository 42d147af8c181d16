import { AUDIT_RECORDED, type AuditRecorded, auditPrincipal, type Principal } from "@agentplane/contracts";
import { BufferedPublisher, type Bus } from "@agentplane/events";
import type { Logger } from "@agentplane/service-kit";

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export function shouldAudit(method: string, status: number): boolean {
  return MUTATING.has(method) || status === 401 || status === 403;
}

/** The most specific id in the path names the target: `/v1/projects/{projectId}/sandboxes/{sandboxId}` → sandbox. */
export function targetOf(params: Record<string, string>): { targetType?: string; targetId?: string } {
  const names = Object.keys(params);
  const last = names[names.length - 1];
  if (!last) return {};
  return { targetType: last.replace(/Id$/, ""), targetId: params[last]! };
}

export interface RequestAudit {
  principal: Principal | undefined;
  operationId: string;
  params: Record<string, string>;
  status: number;
  requestId: string;
  ip: string | undefined;
  userAgent: string | undefined;
  method: string;
  path: string;
}

/**
 * Publishes one `audit.recorded` event per audited request. Publishing never fails or delays the
 * request: while the bus is unavailable events wait in the shared bounded in-memory buffer and are
 * retried (the gateway has no database of its own for an outbox).
 */
export class RequestAuditor {
  private readonly publisher: BufferedPublisher;

  constructor(bus: Bus, options: { logger?: Logger; maxBuffer?: number } = {}) {
    this.publisher = new BufferedPublisher(bus, {
      ...(options.logger ? { logger: options.logger } : {}),
      maxBuffer: options.maxBuffer ?? 100_000,
    });
  }

  record(audit: RequestAudit): void {
    const { principal } = audit;
    const outcome = audit.status === 401 || audit.status === 403 ? "denied" : audit.status >= 400 ? "error" : "success";
    const event: AuditRecorded = {
      id: crypto.randomUUID(),
      ...(audit.params.orgId ? { orgId: audit.params.orgId } : principal?.orgId ? { orgId: principal.orgId } : {}),
      ...(audit.params.projectId
        ? { projectId: audit.params.projectId }
        : principal?.projectId
          ? { projectId: principal.projectId }
          : {}),
      principal: auditPrincipal(principal),
      action: audit.operationId,
      source: "request",
      ...targetOf(audit.params),
      targets: audit.params,
      outcome,
      status: audit.status,
      requestId: audit.requestId,
      ...(audit.ip ? { ip: audit.ip } : {}),
      ...(audit.userAgent ? { userAgent: audit.userAgent } : {}),
      method: audit.method,
      path: audit.path,
      time: new Date().toISOString(),
    };
    this.publisher.publish(AUDIT_RECORDED, event, { id: event.id, time: event.time });
  }

  /** Events still waiting for the bus (for health output and tests). */
  get pending(): number {
    return this.publisher.pending;
  }

  close(): void {
    this.publisher.close();
  }
}
