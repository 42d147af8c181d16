import { getPolicyBindingDriftRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getDrift } from "../../services/drift.ts";
import { orgScope } from "../scope.ts";

/** The last background audit, or a fresh one with `?refresh=true`; org admins only. */
export function registerGetPolicyBindingDrift(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getPolicyBindingDriftRoute, async (c) => {
    const scope = await orgScope(c, ctx, "policies:manage", c.req.valid("param").orgId);
    return c.json(await getDrift(ctx, scope.orgId, c.req.valid("query").refresh === "true"), 200);
  });
}
