import { createProjectPolicyBindingRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { createBinding } from "../../services/bindings.ts";
import { callerOf, projectScope } from "../scope.ts";

export function registerCreateProjectPolicyBinding(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(createProjectPolicyBindingRoute, async (c) => {
    const scope = await projectScope(c, ctx, "project-policies:manage", c.req.valid("param").projectId);
    return c.json(await createBinding(ctx, callerOf(c), scope, c.req.valid("json")), 201);
  });
}
