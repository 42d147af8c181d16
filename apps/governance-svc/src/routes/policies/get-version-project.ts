import { getProjectPolicyVersionRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getPolicyVersion } from "../../services/policies.ts";

/** One immutable version of a policy, read by number. */
export function registerGetProjectPolicyVersion(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getProjectPolicyVersionRoute, async (c) => {
    const { projectId, policyId, version } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "project:read", { projectId });
    return c.json(await getPolicyVersion(ctx, caller, { policyId, version }), 200);
  });
}
