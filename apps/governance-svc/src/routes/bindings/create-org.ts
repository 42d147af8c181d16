import { createOrgPolicyBindingRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { createBinding } from "../../services/bindings.ts";
import { callerOf, orgScope } from "../scope.ts";

export function registerCreateOrgPolicyBinding(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(createOrgPolicyBindingRoute, async (c) => {
    const scope = await orgScope(c, ctx, "policies:manage", c.req.valid("param").orgId);
    return c.json(await createBinding(ctx, callerOf(c), scope, c.req.valid("json")), 201);
  });
}
