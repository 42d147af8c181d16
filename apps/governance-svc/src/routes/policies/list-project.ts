import { listProjectPoliciesRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { listPolicies } from "../../services/policies.ts";

export function registerListProjectPolicies(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(listProjectPoliciesRoute, async (c) => {
    const caller = await authorize(c, ctx.authorizer, "project:read", { projectId: c.req.valid("param").projectId });
    return c.json(await listPolicies(ctx, caller, c.req.valid("query")), 200);
  });
}
