import { getProjectPolicyBindingRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getBinding } from "../../services/bindings.ts";
import { projectScope } from "../scope.ts";

export function registerGetProjectPolicyBinding(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getProjectPolicyBindingRoute, async (c) => {
    const { projectId, bindingId } = c.req.valid("param");
    return c.json(await getBinding(ctx, await projectScope(c, ctx, "project:read", projectId), bindingId), 200);
  });
}
