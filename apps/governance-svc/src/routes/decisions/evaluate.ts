import { evaluatePolicyDecisionRoute } from "@agentplane/contracts";
import { requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { projectScope } from "../scope.ts";

/**
 * "Would this be allowed?" for the caller: the engine's evaluation alone, without the enforcement
 * path's denial records and counters (a question is not an attempt).
 */
export function registerEvaluatePolicyDecision(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(evaluatePolicyDecisionRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const scope = await projectScope(c, ctx, "project:read", projectId);
    const query = c.req.valid("json");
    const answer = await ctx.engine.decide({
      principal: requirePrincipal(c),
      action: query.action,
      resource: { ...query.resource, orgId: scope.orgId, projectId },
      context: query.context ?? {},
    });
    return c.json(answer, 200);
  });
}
