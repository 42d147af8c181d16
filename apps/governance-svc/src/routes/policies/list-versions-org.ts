import { listOrgPolicyVersionsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { listPolicyVersions } from "../../services/policies.ts";

/** Versions are immutable: listed newest first. */
export function registerListOrgPolicyVersions(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(listOrgPolicyVersionsRoute, async (c) => {
    const { orgId, policyId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "policies:read", { orgId });
    return c.json(await listPolicyVersions(ctx, caller, { policyId, ...c.req.valid("query") }), 200);
  });
}
