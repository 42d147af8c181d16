import type { DecisionResponse, Principal } from "@agentplane/contracts";
import { type Actor, audit, type SandboxDeps } from "../services/context.ts";
import { blockingReasons, decide } from "../services/policy.ts";
import type { EgressVerdict } from "./proxy.ts";

/**
 * Egress is closed unless a bound policy opens it. Governance allows an action no binding covers
 * (opt-in per action family), which for egress would mean "anywhere": here an allow counts only
 * when it names the rules that permitted it. A dryrun deny proceeds, as everywhere.
 */
export function egressVerdict(response: DecisionResponse): EgressVerdict {
  if (response.decision === "deny") {
    if (!response.enforced) return { allowed: true };
    const reasons = blockingReasons(response);
    return reasons[0] ? { allowed: false, ruleId: reasons[0].ruleId } : { allowed: false };
  }
  return { allowed: response.reasons.length > 0 };
}

/**
 * One destination of one sandbox, asked of governance as `sandbox:egress` by the sandbox itself on
 * the resource `Host::"<name>"` (the sandbox's labels, so bindings that select sandboxes by label
 * apply), context `{host, port}`. A refusal is audited with the rule that refused it.
 */
export async function decideEgress(
  deps: SandboxDeps,
  sandboxId: string,
  host: string,
  port: number,
): Promise<EgressVerdict> {
  const row = await deps.db
    .selectFrom("sandboxes")
    .select(["id", "org_id", "project_id", "labels"])
    .where("id", "=", sandboxId)
    .executeTakeFirst();
  if (!row?.org_id || !deps.governance) return { allowed: false };
  const principal: Principal = {
    type: "sandbox",
    id: sandboxId,
    sandboxId,
    projectId: row.project_id,
    orgId: row.org_id,
  };
  const response = await decide(deps, {
    principal,
    action: "sandbox:egress",
    resource: {
      type: "Host",
      id: host,
      orgId: row.org_id,
      projectId: row.project_id,
      labels: row.labels ?? {},
      kind: "sandbox",
    },
    context: { host, port },
  });
  const verdict = response ? egressVerdict(response) : { allowed: false };
  if (!verdict.allowed) {
    const actor: Actor = { principal, orgId: row.org_id };
    const reasons = response ? blockingReasons(response) : [];
    await audit(deps, actor, {
      action: "sandbox.egress_denied",
      projectId: row.project_id,
      orgId: row.org_id,
      targetType: "sandbox",
      targetId: sandboxId,
      outcome: "denied",
      details: {
        host,
        port,
        ruleId: verdict.ruleId ?? null,
        reasons: reasons.map((r) => ({
          policyId: r.policyId,
          version: r.version,
          ruleId: r.ruleId,
          bindingId: r.bindingId,
        })),
        ...(verdict.ruleId ? {} : { reason: "no policy permits egress to this destination" }),
      },
    });
  }
  return verdict;
}
