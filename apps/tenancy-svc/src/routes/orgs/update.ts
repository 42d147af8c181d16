import { updateOrganizationRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as orgs from "../../services/orgs.ts";

export function registerUpdateOrganization(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(updateOrganizationRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const decision = await authorize(c, ctx.authorizer, "org:update", { orgId });
    const org = await orgs.updateOrganization(ctx, orgId, c.req.valid("json"));
    return c.json({ ...org, ...(decision.orgRole ? { role: decision.orgRole } : {}) }, 200);
  });
}
