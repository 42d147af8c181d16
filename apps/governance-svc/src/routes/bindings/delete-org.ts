import { deleteOrgPolicyBindingRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { deleteBinding } from "../../services/bindings.ts";
import { callerOf, orgScope } from "../scope.ts";

export function registerDeleteOrgPolicyBinding(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(deleteOrgPolicyBindingRoute, async (c) => {
    const { orgId, bindingId } = c.req.valid("param");
    await deleteBinding(ctx, callerOf(c), await orgScope(c, ctx, "policies:manage", orgId), bindingId);
    return c.body(null, 204);
  });
}
