import { listOrgPoliciesRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { listPolicies } from "../../services/policies.ts";
import { orgScope } from "../scope.ts";

export function registerListOrgPolicies(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(listOrgPoliciesRoute, async (c) => {
    const scope = await orgScope(c, ctx, "policies:read", c.req.valid("param").orgId);
    return c.json(await listPolicies(ctx, scope, c.req.valid("query")), 200);
  });
}
