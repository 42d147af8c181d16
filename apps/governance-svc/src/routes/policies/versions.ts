import {
  getOrgPolicyVersionRoute,
  getProjectPolicyVersionRoute,
  listOrgPolicyVersionsRoute,
  listProjectPolicyVersionsRoute,
} from "@agentplane/contracts";
import { getPolicyVersion, listPolicyVersions } from "../../services/policies.ts";
import { orgScope, projectScope, type RouteDeps } from "../scope.ts";

/** Versions are immutable: listed newest first, each readable by number. */
export function registerPolicyVersions({ app, ctx }: RouteDeps): void {
  app.openapi(listOrgPolicyVersionsRoute, async (c) => {
    const { orgId, policyId } = c.req.valid("param");
    const scope = await orgScope(c, ctx, "policies:read", orgId);
    return c.json(await listPolicyVersions(ctx, scope, policyId, c.req.valid("query")), 200);
  });
  app.openapi(getOrgPolicyVersionRoute, async (c) => {
    const { orgId, policyId, version } = c.req.valid("param");
    const scope = await orgScope(c, ctx, "policies:read", orgId);
    return c.json(await getPolicyVersion(ctx, scope, policyId, version), 200);
  });
  app.openapi(listProjectPolicyVersionsRoute, async (c) => {
    const { projectId, policyId } = c.req.valid("param");
    const scope = await projectScope(c, ctx, "project:read", projectId);
    return c.json(await listPolicyVersions(ctx, scope, policyId, c.req.valid("query")), 200);
  });
  app.openapi(getProjectPolicyVersionRoute, async (c) => {
    const { projectId, policyId, version } = c.req.valid("param");
    const scope = await projectScope(c, ctx, "project:read", projectId);
    return c.json(await getPolicyVersion(ctx, scope, policyId, version), 200);
  });
}
