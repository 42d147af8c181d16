import { evaluatePolicyDecisionRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { decisionPrincipal } from "../../services/decision-principals.ts";

/**
 * "Would this be allowed?" for the caller, or for another principal of the project when a
 * project admin asks: the engine's evaluation alone, without the enforcement path's denial
 * records and counters (a question is not an attempt).
 */
export function registerEvaluatePolicyDecision(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(evaluatePolicyDecisionRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "project:read", { projectId });
    const { principal: asked, ...query } = c.req.valid("json");
    const self = !asked || (asked.type === caller.principal.type && asked.id === caller.principal.id);
    let principal = caller.principal;
    if (!self) {
      // What others may do is the project admins' to know, as they manage its policies.
      await authorize(c, ctx.authorizer, "project-policies:manage", { projectId });
      principal = await decisionPrincipal(ctx, caller, { projectId, principal: asked });
    }
    const answer = await ctx.engine.decide({
      principal,
      action: query.action,
      resource: { ...query.resource, orgId: caller.orgId, projectId },
      context: query.context ?? {},
    });
    const { type, id, displayName } = principal;
    return c.json({ ...answer, principal: { type, id, ...(displayName ? { displayName } : {}) } }, 200);
  });
}
