import {
  type DecisionRequest,
  type DecisionResponse,
  headerNameProblem,
  headerValueProblem,
  internalResolveCredentialRoute,
  ResolveCredentialResponse,
} from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { callInternal, type DecisionCache, servicePrincipal } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";

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
      return sendable(credentialId, { authorization: `Bearer ${f.token ?? ""}` });
    case "http-header":
      return f.name ? sendable(credentialId, { [f.name.toLowerCase()]: f.value ?? "" }) : {};
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

/**
 * The credential's header when HTTP can carry it. One stored before governance checked its fields
 * (a line break in the token, a `Host` header name) is refused here by name: the HTTP client's own
 * error would repeat the secret value into the log.
 */
function sendable(credentialId: string, headers: Record<string, string>): Record<string, string> {
  for (const [name, value] of Object.entries(headers)) {
    const problem = headerNameProblem(name) ?? headerValueProblem(value);
    if (problem) {
      throw new ProblemError("bad-request", {
        detail: `Credential ${credentialId} cannot be sent as an HTTP header: its ${name === "authorization" ? "token" : "header"} ${problem}; rotate it`,
        errors: [{ pointer: "/body/credentialId", message: `the credential's header ${problem}` }],
      });
    }
  }
  return headers;
}
