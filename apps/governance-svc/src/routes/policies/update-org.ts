import { updateOrgPolicyRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { updatePolicy } from "../../services/policies.ts";
import { callerOf, orgScope } from "../scope.ts";

export function registerUpdateOrgPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(updateOrgPolicyRoute, async (c) => {
    const { orgId, policyId } = c.req.valid("param");
    const scope = await orgScope(c, ctx, "policies:manage", orgId);
    return c.json(await updatePolicy(ctx, callerOf(c), scope, policyId, c.req.valid("json")), 200);
  });
}
