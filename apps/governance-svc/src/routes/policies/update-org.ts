import { updateOrgPolicyRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { updatePolicy } from "../../services/policies.ts";

export function registerUpdateOrgPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(updateOrgPolicyRoute, async (c) => {
    const { orgId, policyId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "policies:manage", { orgId });
    return c.json(await updatePolicy(ctx, caller, { policyId, ...c.req.valid("json") }), 200);
  });
}
