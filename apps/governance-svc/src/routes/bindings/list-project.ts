import { listProjectPolicyBindingsRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { listBindings } from "../../services/bindings.ts";
import { projectScope } from "../scope.ts";

export function registerListProjectPolicyBindings(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(listProjectPolicyBindingsRoute, async (c) => {
    const scope = await projectScope(c, ctx, "project:read", c.req.valid("param").projectId);
    return c.json(await listBindings(ctx, scope, c.req.valid("query")), 200);
  });
}
