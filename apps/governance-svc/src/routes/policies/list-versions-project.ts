import { listProjectPolicyVersionsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { listPolicyVersions } from "../../services/policies.ts";

/** Versions are immutable: listed newest first. */
export function registerListProjectPolicyVersions(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(listProjectPolicyVersionsRoute, async (c) => {
    const { projectId, policyId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "project:read", { projectId });
    return c.json(await listPolicyVersions(ctx, caller, { policyId, ...c.req.valid("query") }), 200);
  });
}
