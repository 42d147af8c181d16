import { deleteOrgPolicyRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { deletePolicy } from "../../services/policies.ts";

export function registerDeleteOrgPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(deleteOrgPolicyRoute, async (c) => {
    const { orgId, policyId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "policies:manage", { orgId });
    await deletePolicy(ctx, caller, { policyId });
    return c.body(null, 204);
  });
}
