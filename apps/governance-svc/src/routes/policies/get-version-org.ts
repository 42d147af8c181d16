import { getOrgPolicyVersionRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getPolicyVersion } from "../../services/policies.ts";

/** One immutable version of a policy, read by number. */
export function registerGetOrgPolicyVersion(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getOrgPolicyVersionRoute, async (c) => {
    const { orgId, policyId, version } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "policies:read", { orgId });
    return c.json(await getPolicyVersion(ctx, caller, { policyId, version }), 200);
  });
}
