import { listOrgPolicyBindingsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { listBindings } from "../../services/bindings.ts";

export function registerListOrgPolicyBindings(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(listOrgPolicyBindingsRoute, async (c) => {
    const caller = await authorize(c, ctx.authorizer, "policies:read", { orgId: c.req.valid("param").orgId });
    return c.json(await listBindings(ctx, caller, c.req.valid("query")), 200);
  });
}
