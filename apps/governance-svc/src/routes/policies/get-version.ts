import { getOrgPolicyVersionRoute, getProjectPolicyVersionRoute } from "@agentplane/contracts";
import { getPolicyVersion } from "../../services/policies.ts";
import { orgScope, projectScope, type RouteDeps } from "../scope.ts";

/** One immutable version of a policy, read by number. */
export function registerGetPolicyVersion({ app, ctx }: RouteDeps): void {
  app.openapi(getOrgPolicyVersionRoute, async (c) => {
    const { orgId, policyId, version } = c.req.valid("param");
    const scope = await orgScope(c, ctx, "policies:read", orgId);
    return c.json(await getPolicyVersion(ctx, scope, policyId, version), 200);
  });
  app.openapi(getProjectPolicyVersionRoute, async (c) => {
    const { projectId, policyId, version } = c.req.valid("param");
    const scope = await projectScope(c, ctx, "project:read", projectId);
    return c.json(await getPolicyVersion(ctx, scope, policyId, version), 200);
  });
}
