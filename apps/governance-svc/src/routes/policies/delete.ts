import { deleteOrgPolicyRoute, deleteProjectPolicyRoute } from "@agentplane/contracts";
import { deletePolicy } from "../../services/policies.ts";
import { callerOf, orgScope, projectScope, type RouteDeps } from "../scope.ts";

export function registerDeletePolicy({ app, ctx }: RouteDeps): void {
  app.openapi(deleteOrgPolicyRoute, async (c) => {
    const { orgId, policyId } = c.req.valid("param");
    await deletePolicy(ctx, callerOf(c), await orgScope(c, ctx, "policies:manage", orgId), policyId);
    return c.body(null, 204);
  });
  app.openapi(deleteProjectPolicyRoute, async (c) => {
    const { projectId, policyId } = c.req.valid("param");
    await deletePolicy(ctx, callerOf(c), await projectScope(c, ctx, "project-policies:manage", projectId), policyId);
    return c.body(null, 204);
  });
}
