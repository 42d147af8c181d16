import { evaluatePolicyDecisionRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";

/**
 * "Would this be allowed?" for the caller: the engine's evaluation alone, without the enforcement
 * path's denial records and counters (a question is not an attempt).
 */
export function registerEvaluatePolicyDecision(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(evaluatePolicyDecisionRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "project:read", { projectId });
    const query = c.req.valid("json");
    const answer = await ctx.engine.decide({
      principal: caller.principal,
      action: query.action,
      resource: { ...query.resource, orgId: caller.orgId, projectId },
      context: query.context ?? {},
    });
    return c.json(answer, 200);
  });
}
