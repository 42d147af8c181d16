import { updateProjectPolicyRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { updatePolicy } from "../../services/policies.ts";

export function registerUpdateProjectPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(updateProjectPolicyRoute, async (c) => {
    const { projectId, policyId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "project-policies:manage", { projectId });
    return c.json(await updatePolicy(ctx, caller, { policyId, ...c.req.valid("json") }), 200);
  });
}
