import { listProjectPolicyVersionsRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { listPolicyVersions } from "../../services/policies.ts";
import { projectScope } from "../scope.ts";

/** Versions are immutable: listed newest first. */
export function registerListProjectPolicyVersions(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(listProjectPolicyVersionsRoute, async (c) => {
    const { projectId, policyId } = c.req.valid("param");
    const scope = await projectScope(c, ctx, "project:read", projectId);
    return c.json(await listPolicyVersions(ctx, scope, policyId, c.req.valid("query")), 200);
  });
}
