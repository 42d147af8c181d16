import { getOrganizationRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { getOrganizationRow } from "../../services/orgs.ts";
import { toOrganization } from "../../services/serialize.ts";

export function registerGetOrganization(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getOrganizationRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const decision = await authorize(c, ctx.authorizer, "org:read", { orgId });
    return c.json(toOrganization(await getOrganizationRow(ctx, orgId), decision.orgRole), 200);
  });
}
