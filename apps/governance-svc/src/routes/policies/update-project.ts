import { updateProjectPolicyRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { updatePolicy } from "../../services/policies.ts";
import { callerOf, projectScope } from "../scope.ts";

export function registerUpdateProjectPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(updateProjectPolicyRoute, async (c) => {
    const { projectId, policyId } = c.req.valid("param");
    const scope = await projectScope(c, ctx, "project-policies:manage", projectId);
    return c.json(await updatePolicy(ctx, callerOf(c), scope, policyId, c.req.valid("json")), 200);
  });
}
