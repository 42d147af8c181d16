import { deleteOrganizationRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as orgs from "../../services/orgs.ts";

export function registerDeleteOrganization(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(deleteOrganizationRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "org:delete", { orgId });
    await orgs.deleteOrganization(ctx, caller);
    return c.body(null, 204);
  });
}
