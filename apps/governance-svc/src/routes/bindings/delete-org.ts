import { deleteOrgPolicyBindingRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { deleteBinding } from "../../services/bindings.ts";

export function registerDeleteOrgPolicyBinding(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(deleteOrgPolicyBindingRoute, async (c) => {
    const { orgId, bindingId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "policies:manage", { orgId });
    await deleteBinding(ctx, caller, { bindingId });
    return c.body(null, 204);
  });
}
