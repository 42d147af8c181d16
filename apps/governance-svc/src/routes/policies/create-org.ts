import { createOrgPolicyRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { createPolicy } from "../../services/policies.ts";
import { callerOf, orgScope } from "../scope.ts";

export function registerCreateOrgPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(createOrgPolicyRoute, async (c) => {
    const scope = await orgScope(c, ctx, "policies:manage", c.req.valid("param").orgId);
    return c.json(await createPolicy(ctx, callerOf(c), scope, c.req.valid("json")), 201);
  });
}
