import { createOrgPolicyRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { createPolicy } from "../../services/policies.ts";

export function registerCreateOrgPolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(createOrgPolicyRoute, async (c) => {
    const caller = await authorize(c, ctx.authorizer, "policies:manage", { orgId: c.req.valid("param").orgId });
    return c.json(await createPolicy(ctx, caller, c.req.valid("json")), 201);
  });
}
