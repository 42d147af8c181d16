import { updateOrganizationRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as orgs from "../../services/orgs.ts";

export function registerUpdateOrganization(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(updateOrganizationRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "org:update", { orgId });
    return c.json(await orgs.updateOrganization(ctx, caller, c.req.valid("json")), 200);
  });
}
