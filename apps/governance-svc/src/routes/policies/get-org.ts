import { getOrgPolicyRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getPolicy } from "../../services/policies.ts";
import { orgScope } from "../scope.ts";

export function registerGetOrgPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getOrgPolicyRoute, async (c) => {
    const { orgId, policyId } = c.req.valid("param");
    return c.json(await getPolicy(ctx, await orgScope(c, ctx, "policies:read", orgId), policyId), 200);
  });
}
