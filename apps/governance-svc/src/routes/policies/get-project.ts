import { getProjectPolicyRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getPolicy } from "../../services/policies.ts";

export function registerGetProjectPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getProjectPolicyRoute, async (c) => {
    const { projectId, policyId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "project:read", { projectId });
    return c.json(await getPolicy(ctx, caller, { policyId }), 200);
  });
}
