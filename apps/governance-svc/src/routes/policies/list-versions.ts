import { listOrgPolicyVersionsRoute, listProjectPolicyVersionsRoute } from "@agentplane/contracts";
import { listPolicyVersions } from "../../services/policies.ts";
import { orgScope, projectScope, type RouteDeps } from "../scope.ts";

/** Versions are immutable: listed newest first. */
export function registerListPolicyVersions({ app, ctx }: RouteDeps): void {
  app.openapi(listOrgPolicyVersionsRoute, async (c) => {
    const { orgId, policyId } = c.req.valid("param");
    const scope = await orgScope(c, ctx, "policies:read", orgId);
    return c.json(await listPolicyVersions(ctx, scope, policyId, c.req.valid("query")), 200);
  });
  app.openapi(listProjectPolicyVersionsRoute, async (c) => {
    const { projectId, policyId } = c.req.valid("param");
    const scope = await projectScope(c, ctx, "project:read", projectId);
    return c.json(await listPolicyVersions(ctx, scope, policyId, c.req.valid("query")), 200);
  });
}
