import { listOrgPolicyBindingsRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { listBindings } from "../../services/bindings.ts";
import { orgScope } from "../scope.ts";

export function registerListOrgPolicyBindings(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(listOrgPolicyBindingsRoute, async (c) => {
    const scope = await orgScope(c, ctx, "policies:read", c.req.valid("param").orgId);
    return c.json(await listBindings(ctx, scope, c.req.valid("query")), 200);
  });
}
