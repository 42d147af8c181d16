import { listOrgPoliciesRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { listPolicies } from "../../services/policies.ts";

export function registerListOrgPolicies(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(listOrgPoliciesRoute, async (c) => {
    const caller = await authorize(c, ctx.authorizer, "policies:read", { orgId: c.req.valid("param").orgId });
    return c.json(await listPolicies(ctx, caller, c.req.valid("query")), 200);
  });
}
