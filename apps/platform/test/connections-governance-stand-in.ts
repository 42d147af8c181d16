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
export function governanceStandIn(
  keys: InternalKeys,
  rules: DenyRule[],
  credentials: Record<string, { kind: string; fields: Record<string, string> }> = {},
) {
  const seen: DecisionRequest[] = [];
  const client = new ServiceClient(
    "governance",
    async (request) => {
      const path = new URL(request.url).pathname;
      if (path === GOVERNANCE_INTERNAL.resolveCredential) {
        const { credentialId } = (await request.json()) as { credentialId: string };
        const credential = credentials[credentialId];
        if (!credential) return Response.json({ type: "about:blank/not-found", status: 404 }, { status: 404 });
        return Response.json({ id: credentialId, ...credential });
      }
      if (path !== GOVERNANCE_INTERNAL.decide) return new Response(null, { status: 404 });
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
