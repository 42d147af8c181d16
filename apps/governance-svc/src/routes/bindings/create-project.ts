import { createProjectPolicyBindingRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { createBinding } from "../../services/bindings.ts";

export function registerCreateProjectPolicyBinding(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(createProjectPolicyBindingRoute, async (c) => {
    const caller = await authorize(c, ctx.authorizer, "project-policies:manage", {
      projectId: c.req.valid("param").projectId,
    });
    return c.json(await createBinding(ctx, caller, c.req.valid("json")), 201);
  });
}
