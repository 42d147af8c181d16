import { getProjectPolicyRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getPolicy } from "../../services/policies.ts";
import { projectScope } from "../scope.ts";

export function registerGetProjectPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getProjectPolicyRoute, async (c) => {
    const { projectId, policyId } = c.req.valid("param");
    return c.json(await getPolicy(ctx, await projectScope(c, ctx, "project:read", projectId), policyId), 200);
  });
}
