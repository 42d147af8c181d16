import type { DecisionRequest, DecisionResponse } from "@agentplane/contracts";
import { recordStandaloneEvent } from "@agentplane/events";
import { inChildSpan } from "@agentplane/telemetry";
import type { GovernanceContext } from "../context.ts";

/**
 * One decision: answered by the engine from memory. A deny, or a dryrun "would deny", becomes an
 * audit record naming the rule ids, bindings and mode (written without holding up the answer);
 * allows are only counted.
 */
export async function decide(
  ctx: GovernanceContext,
  request: DecisionRequest,
  requestId?: string,
): Promise<DecisionResponse> {
  const response = await inChildSpan(
    "governance.evaluate",
    { "agentplane.governance.action": request.action },
    async (span) => {
      const answer = await ctx.engine.decide(request);
      span.setAttributes({
        "agentplane.governance.decision": answer.decision,
        "agentplane.governance.enforced": answer.enforced,
        "agentplane.governance.policies": answer.policies?.length ?? 0,
        "agentplane.governance.reasons": answer.reasons.length,
      });
      return answer;
    },
  );
  if (request.action === "sandbox:egress") void ctx.egressVersions.note(request, response);
  if (response.decision === "allow") {
    ctx.counters.allow++;
    return response;
  }
  if (response.enforced) ctx.counters.deny++;
  else ctx.counters.dryrunDeny++;
  const first = response.reasons[0];
  const context = request.context ?? {};
  recordStandaloneEvent(ctx, request.principal, {
    action: response.enforced ? "policy.denied" : "policy.dryrun_denied",
    outcome: response.enforced ? "denied" : "success",
    orgId: request.resource.orgId,
    projectId: request.resource.projectId,
    targetType: request.resource.type,
    targetId: request.resource.id,
    requestId,
    details: {
      governedAction: request.action,
      mode: response.enforced ? "enforce" : "dryrun",
      ruleId: first?.ruleId,
      bindingId: first?.bindingId,
      policyId: first?.policyId,
      version: first?.version,
      reasons: response.reasons,
      // What the request was about, without secrets: enforcement points never send env values.
      ...(typeof context.host === "string" ? { host: context.host, port: context.port } : {}),
      ...(Array.isArray(context.argv) ? { argv0: String(context.argv[0] ?? "") } : {}),
    },
  }).catch((err) => ctx.logger.warn({ err: (err as Error).message }, "denial audit record not written"));
  return response;
}
