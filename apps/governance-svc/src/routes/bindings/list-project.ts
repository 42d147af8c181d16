import { listProjectPolicyBindingsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { listBindings } from "../../services/bindings.ts";

export function registerListProjectPolicyBindings(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(listProjectPolicyBindingsRoute, async (c) => {
    const caller = await authorize(c, ctx.authorizer, "project:read", { projectId: c.req.valid("param").projectId });
    return c.json(await listBindings(ctx, caller, c.req.valid("query")), 200);
  });
}
