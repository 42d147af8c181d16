import { listProjectPoliciesRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { listPolicies } from "../../services/policies.ts";
import { projectScope } from "../scope.ts";

export function registerListProjectPolicies(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(listProjectPoliciesRoute, async (c) => {
    const scope = await projectScope(c, ctx, "project:read", c.req.valid("param").projectId);
    return c.json(await listPolicies(ctx, scope, c.req.valid("query")), 200);
  });
}
