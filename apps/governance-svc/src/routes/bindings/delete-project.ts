import { deleteProjectPolicyBindingRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { deleteBinding } from "../../services/bindings.ts";

export function registerDeleteProjectPolicyBinding(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(deleteProjectPolicyBindingRoute, async (c) => {
    const { projectId, bindingId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "project-policies:manage", { projectId });
    await deleteBinding(ctx, caller, { bindingId });
    return c.body(null, 204);
  });
}
