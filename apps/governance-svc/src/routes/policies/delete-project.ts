import { deleteProjectPolicyRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { deletePolicy } from "../../services/policies.ts";

export function registerDeleteProjectPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(deleteProjectPolicyRoute, async (c) => {
    const { projectId, policyId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "project-policies:manage", { projectId });
    await deletePolicy(ctx, caller, { policyId });
    return c.body(null, 204);
  });
}
