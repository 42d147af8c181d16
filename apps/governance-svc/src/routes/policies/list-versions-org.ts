import { listOrgPolicyVersionsRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { listPolicyVersions } from "../../services/policies.ts";
import { orgScope } from "../scope.ts";

/** Versions are immutable: listed newest first. */
export function registerListOrgPolicyVersions(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(listOrgPolicyVersionsRoute, async (c) => {
    const { orgId, policyId } = c.req.valid("param");
    const scope = await orgScope(c, ctx, "policies:read", orgId);
    return c.json(await listPolicyVersions(ctx, scope, policyId, c.req.valid("query")), 200);
  });
}
