import { deleteOrgPolicyRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { deletePolicy } from "../../services/policies.ts";
import { callerOf, orgScope } from "../scope.ts";

export function registerDeleteOrgPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(deleteOrgPolicyRoute, async (c) => {
    const { orgId, policyId } = c.req.valid("param");
    await deletePolicy(ctx, callerOf(c), await orgScope(c, ctx, "policies:manage", orgId), policyId);
    return c.body(null, 204);
  });
}
