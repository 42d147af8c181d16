import { createOrgPolicyBindingRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { createBinding } from "../../services/bindings.ts";

export function registerCreateOrgPolicyBinding(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(createOrgPolicyBindingRoute, async (c) => {
    const caller = await authorize(c, ctx.authorizer, "policies:manage", { orgId: c.req.valid("param").orgId });
    return c.json(await createBinding(ctx, caller, c.req.valid("json")), 201);
  });
}
