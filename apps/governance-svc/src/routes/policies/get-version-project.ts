import { getProjectPolicyVersionRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getPolicyVersion } from "../../services/policies.ts";
import { projectScope } from "../scope.ts";

/** One immutable version of a policy, read by number. */
export function registerGetProjectPolicyVersion(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getProjectPolicyVersionRoute, async (c) => {
    const { projectId, policyId, version } = c.req.valid("param");
    const scope = await projectScope(c, ctx, "project:read", projectId);
    return c.json(await getPolicyVersion(ctx, scope, policyId, version), 200);
  });
}
