import { getOrgPolicyVersionRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getPolicyVersion } from "../../services/policies.ts";
import { orgScope } from "../scope.ts";

/** One immutable version of a policy, read by number. */
export function registerGetOrgPolicyVersion(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getOrgPolicyVersionRoute, async (c) => {
    const { orgId, policyId, version } = c.req.valid("param");
    const scope = await orgScope(c, ctx, "policies:read", orgId);
    return c.json(await getPolicyVersion(ctx, scope, policyId, version), 200);
  });
}
