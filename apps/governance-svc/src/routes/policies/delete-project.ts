import { deleteProjectPolicyRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { deletePolicy } from "../../services/policies.ts";
import { callerOf, projectScope } from "../scope.ts";

export function registerDeleteProjectPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(deleteProjectPolicyRoute, async (c) => {
    const { projectId, policyId } = c.req.valid("param");
    await deletePolicy(ctx, callerOf(c), await projectScope(c, ctx, "project-policies:manage", projectId), policyId);
    return c.body(null, 204);
  });
}
