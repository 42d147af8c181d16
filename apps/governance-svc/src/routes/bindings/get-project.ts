import { getProjectPolicyBindingRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getBinding } from "../../services/bindings.ts";

export function registerGetProjectPolicyBinding(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getProjectPolicyBindingRoute, async (c) => {
    const { projectId, bindingId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "project:read", { projectId });
    return c.json(await getBinding(ctx, caller, { bindingId }), 200);
  });
}
