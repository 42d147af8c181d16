import { getPolicyBindingDriftRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getDrift } from "../../services/drift.ts";

/** The last background audit, or a fresh one with `?refresh=true`; org admins only. */
export function registerGetPolicyBindingDrift(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getPolicyBindingDriftRoute, async (c) => {
    const caller = await authorize(c, ctx.authorizer, "policies:manage", { orgId: c.req.valid("param").orgId });
    return c.json(await getDrift(ctx, caller, { refresh: c.req.valid("query").refresh === "true" }), 200);
  });
}
