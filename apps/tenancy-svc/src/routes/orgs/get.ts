import { getOrganizationRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as orgs from "../../services/orgs.ts";

export function registerGetOrganization(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getOrganizationRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "org:read", { orgId });
    return c.json(await orgs.getOrganization(ctx, caller), 200);
  });
}
