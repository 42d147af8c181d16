import { deleteProjectPolicyBindingRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { deleteBinding } from "../../services/bindings.ts";
import { callerOf, projectScope } from "../scope.ts";

export function registerDeleteProjectPolicyBinding(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(deleteProjectPolicyBindingRoute, async (c) => {
    const { projectId, bindingId } = c.req.valid("param");
    await deleteBinding(ctx, callerOf(c), await projectScope(c, ctx, "project-policies:manage", projectId), bindingId);
    return c.body(null, 204);
  });
}
