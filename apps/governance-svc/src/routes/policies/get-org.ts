import { getOrgPolicyRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getPolicy } from "../../services/policies.ts";

export function registerGetOrgPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getOrgPolicyRoute, async (c) => {
    const { orgId, policyId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "policies:read", { orgId });
    return c.json(await getPolicy(ctx, caller, { policyId }), 200);
  });
}
