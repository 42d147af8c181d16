import type { DecisionRequest, DecisionResponse } from "@agentplane/contracts";
import { GOVERNANCE_INTERNAL } from "@agentplane/contracts";
import { type InternalKeys, ServiceClient } from "@agentplane/service-kit";

export interface DenyRule {
  ruleId: string;
  matches(request: DecisionRequest): boolean;
}

/**
 * governance-svc's decision API as a contract stand-in (the real service wires in separately):
 * answers DecisionResponse from a list of deny rules and records every request it saw.
 */
export function governanceStandIn(keys: InternalKeys, rules: DenyRule[]) {
  const seen: DecisionRequest[] = [];
  const client = new ServiceClient(
    "governance",
    async (request) => {
      if (new URL(request.url).pathname !== GOVERNANCE_INTERNAL.decide) return new Response(null, { status: 404 });
      const body = (await request.json()) as DecisionRequest;
      seen.push(body);
      const rule = rules.find((r) => r.matches(body));
      const answer: DecisionResponse = {
        decision: rule ? "deny" : "allow",
        enforced: Boolean(rule),
        reasons: rule
          ? [{ policyId: "pol_test", version: 1, ruleId: rule.ruleId, bindingId: "pb_test", mode: "enforce" }]
          : [],
        evaluatedAt: new Date().toISOString(),
      };
      return Response.json(answer);
    },
    keys,
  );
  return { client, seen };
}
