import { listOrgPoliciesRoute, listProjectPoliciesRoute } from "@agentplane/contracts";
import { listPolicies } from "../../services/policies.ts";
import { orgScope, projectScope, type RouteDeps } from "../scope.ts";

export function registerListPolicies({ app, ctx }: RouteDeps): void {
  app.openapi(listOrgPoliciesRoute, async (c) => {
    const scope = await orgScope(c, ctx, "policies:read", c.req.valid("param").orgId);
    return c.json(await listPolicies(ctx, scope, c.req.valid("query")), 200);
  });
  app.openapi(listProjectPoliciesRoute, async (c) => {
    const scope = await projectScope(c, ctx, "project:read", c.req.valid("param").projectId);
    return c.json(await listPolicies(ctx, scope, c.req.valid("query")), 200);
  });
}
