import { getOrgPolicyRoute, getProjectPolicyRoute } from "@agentplane/contracts";
import { getPolicy } from "../../services/policies.ts";
import { orgScope, projectScope, type RouteDeps } from "../scope.ts";

export function registerGetPolicy({ app, ctx }: RouteDeps): void {
  app.openapi(getOrgPolicyRoute, async (c) => {
    const { orgId, policyId } = c.req.valid("param");
    return c.json(await getPolicy(ctx, await orgScope(c, ctx, "policies:read", orgId), policyId), 200);
  });
  app.openapi(getProjectPolicyRoute, async (c) => {
    const { projectId, policyId } = c.req.valid("param");
    return c.json(await getPolicy(ctx, await projectScope(c, ctx, "project:read", projectId), policyId), 200);
  });
}
