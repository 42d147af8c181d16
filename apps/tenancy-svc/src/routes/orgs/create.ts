import { createOrganizationRoute } from "@agentplane/contracts";
import { requesterOf, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as orgs from "../../services/orgs.ts";

export function registerCreateOrganization(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(createOrganizationRoute, async (c) => {
    const org = await orgs.createOrganization(ctx, requesterOf(c), c.req.valid("json"));
    return c.json(org, 201);
  });
}
