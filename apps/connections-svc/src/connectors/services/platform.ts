import {
  type AuditRecorded,
  auditPrincipal,
  type DecisionRequest,
  type DecisionResponse,
  internalResolveCredentialRoute,
  newId,
  type Principal,
  ResolveCredentialResponse,
} from "@agentplane/contracts";
import { enqueueAuditRecord } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import { callInternal, type DecisionCache, servicePrincipal } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { ConnectionsContext } from "../../context.ts";
import type { ConnectionsDb } from "../../db/schema/index.ts";

const CALLER = servicePrincipal("connections");

/**
 * governance's decision for a tool call through the shared decision cache (an allow is reused for
 * up to a second, inside governance's 2 s propagation promise; denies are asked every time, so
 * governance audits each). With no governance deployed there are no policies: allow.
 */
export function decideToolCall(
  ctx: ConnectionsContext,
  decisions: DecisionCache,
  request: DecisionRequest,
  requestId?: string,
): Promise<DecisionResponse> {
  if (!ctx.governance) {
    return Promise.resolve({ decision: "allow", enforced: false, reasons: [], evaluatedAt: new Date().toISOString() });
  }
  return decisions.decide(ctx.governance, request, requestId);
}

/** A connector credential's header, resolved for the connector's project only; never logged or returned. */
export async function credentialHeaders(
  ctx: ConnectionsContext,
  credentialId: string,
  projectId: string,
): Promise<Record<string, string>> {
  if (!ctx.governance) {
    throw new ProblemError("service-unavailable", { detail: "Connector credentials need the governance service" });
  }
  const body = await callInternal(ctx.governance, internalResolveCredentialRoute, {
    principal: CALLER,
    body: { credentialId, projectId },
  });
  const credential = ResolveCredentialResponse.parse(body);
  const f = credential.fields;
  switch (credential.kind) {
    case "http-bearer":
      return { authorization: `Bearer ${f.token ?? ""}` };
    case "http-header":
      return f.name ? { [f.name.toLowerCase()]: f.value ?? "" } : {};
    case "http-basic":
      return {
        authorization: `Basic ${Buffer.from(`${f.username ?? ""}:${f.password ?? ""}`).toString("base64")}`,
      };
    default:
      throw new ProblemError("bad-request", {
        detail: `Credential ${credentialId} is of kind ${credential.kind}; connectors take http-bearer, http-header or http-basic`,
        errors: [
          { pointer: "/body/credentialId", message: `kind ${credential.kind} cannot be injected into HTTP calls` },
        ],
      });
  }
}

export interface ConnectorAuditEvent {
  action: string;
  orgId: string;
  projectId: string;
  connectorId: string;
  outcome?: AuditRecorded["outcome"];
  /** Attributes of the change or call; never argument values, results, headers or secrets. */
  details?: Record<string, unknown>;
  requestId?: string | undefined;
}

/** The `audit.recorded` record of a connector change or call. */
export function connectorAuditRecord(principal: Principal | undefined, event: ConnectorAuditEvent): AuditRecorded {
  return {
    id: newId("audit"),
    principal: auditPrincipal(principal),
    action: event.action,
    source: "domain",
    targetType: "connector",
    targetId: event.connectorId,
    targets: {},
    outcome: event.outcome ?? "success",
    time: new Date().toISOString(),
    orgId: event.orgId,
    projectId: event.projectId,
    ...(event.details ? { details: event.details } : {}),
    ...(event.requestId ? { requestId: event.requestId } : {}),
  };
}

/** Writes an `audit.recorded` record to the outbox in `trx` (the change's transaction, or the db alone). */
export async function recordConnectorEvent(
  ctx: ConnectionsContext,
  trx: Kysely<ConnectionsDb>,
  principal: Principal | undefined,
  event: ConnectorAuditEvent,
): Promise<void> {
  await enqueueAuditRecord(ctx, trx, connectorAuditRecord(principal, event));
}
