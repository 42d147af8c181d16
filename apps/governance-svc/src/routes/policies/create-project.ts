import { createProjectPolicyRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { createPolicy } from "../../services/policies.ts";

export function registerCreateProjectPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(createProjectPolicyRoute, async (c) => {
    const caller = await authorize(c, ctx.authorizer, "project-policies:manage", {
      projectId: c.req.valid("param").projectId,
    });
    return c.json(await createPolicy(ctx, caller, c.req.valid("json")), 201);
  });
}
