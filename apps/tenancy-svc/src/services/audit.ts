import { AUDIT_RECORDED, type AuditRecorded, newId, type Principal } from "@agentplane/contracts";
import type { TenancyContext } from "../context.ts";

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
 * Publishes an `audit.recorded` domain record. A bus failure is logged and swallowed: the change
 * is already committed and must not be reported as failed (an outbox will close this gap).
 */
export async function recordDomainEvent(
  ctx: TenancyContext,
  principal: Principal | undefined,
  event: DomainEvent,
): Promise<void> {
  const record: AuditRecorded = {
    id: newId("audit"),
    principal: principal
      ? {
          type: principal.type,
          id: principal.id,
          ...(principal.displayName ? { displayName: principal.displayName } : {}),
        }
      : { type: "anonymous" },
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
  try {
    await ctx.bus.publish(AUDIT_RECORDED, record, { id: record.id });
  } catch (err) {
    ctx.logger.warn({ err: (err as Error).message, action: event.action }, "audit event not published");
  }
}
