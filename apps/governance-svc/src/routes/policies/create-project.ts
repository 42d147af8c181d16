import { createProjectPolicyRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { createPolicy } from "../../services/policies.ts";
import { callerOf, projectScope } from "../scope.ts";

export function registerCreateProjectPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(createProjectPolicyRoute, async (c) => {
    const scope = await projectScope(c, ctx, "project-policies:manage", c.req.valid("param").projectId);
    return c.json(await createPolicy(ctx, callerOf(c), scope, c.req.valid("json")), 201);
  });
}
