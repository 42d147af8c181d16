import type { Principal } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { DecisionCache, ServiceClient } from "@agentplane/service-kit";
import type { CallerScope } from "./caller.ts";

export interface LlmDecisionInput {
  principal: Principal;
  scope: CallerScope;
  provider: string;
  family?: string | undefined;
  region?: string | undefined;
  modelId?: string | undefined;
}

/**
 * Governance's `llm:invoke` decision through the shared decision cache (an allow is reused for
 * about a second, inside governance's 2 s propagation promise; denies are asked each time);
 * without a governance service every call is allowed.
 */
export async function decideLlmInvoke(
  governance: { client: ServiceClient; cache: DecisionCache } | undefined,
  input: LlmDecisionInput,
  requestId: string,
): Promise<void> {
  if (!governance) return;
  const model = input.modelId ?? "unknown";
  const decision = await governance.cache.decide(
    governance.client,
    {
      principal: input.principal,
      action: "llm:invoke",
      resource: { type: "Model", id: model, orgId: input.scope.orgId, projectId: input.scope.projectId },
      // Every attribute is present (empty when the route has none) so policies can test them.
      context: {
        provider: input.provider,
        family: input.family ?? "",
        region: input.region ?? "",
        modelId: input.modelId ?? "",
      },
    },
    requestId,
  );
  if (decision.decision === "deny" && decision.enforced) {
    const rule = decision.reasons[0];
    throw new ProblemError("policy-denied", {
      detail: `A policy denies calling ${model} on ${input.provider}${rule ? ` (rule ${rule.ruleId} of ${rule.policyId})` : ""}`,
      extensions: { reasons: decision.reasons },
    });
  }
}
