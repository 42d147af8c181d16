import { getOrgPolicyBindingRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getBinding } from "../../services/bindings.ts";

export function registerGetOrgPolicyBinding(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getOrgPolicyBindingRoute, async (c) => {
    const { orgId, bindingId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "policies:read", { orgId });
    return c.json(await getBinding(ctx, caller, { bindingId }), 200);
  });
}
