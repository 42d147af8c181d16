import { getOrgPolicyBindingRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getBinding } from "../../services/bindings.ts";
import { orgScope } from "../scope.ts";

export function registerGetOrgPolicyBinding(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getOrgPolicyBindingRoute, async (c) => {
    const { orgId, bindingId } = c.req.valid("param");
    return c.json(await getBinding(ctx, await orgScope(c, ctx, "policies:read", orgId), bindingId), 200);
  });
}
