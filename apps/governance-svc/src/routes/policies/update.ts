import { updateOrgPolicyRoute, updateProjectPolicyRoute } from "@agentplane/contracts";
import { updatePolicy } from "../../services/policies.ts";
import { callerOf, orgScope, projectScope, type RouteDeps } from "../scope.ts";

export function registerUpdatePolicy({ app, ctx }: RouteDeps): void {
  app.openapi(updateOrgPolicyRoute, async (c) => {
    const { orgId, policyId } = c.req.valid("param");
    const scope = await orgScope(c, ctx, "policies:manage", orgId);
    return c.json(await updatePolicy(ctx, callerOf(c), scope, policyId, c.req.valid("json")), 200);
  });
  app.openapi(updateProjectPolicyRoute, async (c) => {
    const { projectId, policyId } = c.req.valid("param");
    const scope = await projectScope(c, ctx, "project-policies:manage", projectId);
    return c.json(await updatePolicy(ctx, callerOf(c), scope, policyId, c.req.valid("json")), 200);
  });
}
