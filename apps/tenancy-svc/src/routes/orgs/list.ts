import { listOrganizationsRoute } from "@agentplane/contracts";
import { requesterOf, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as orgs from "../../services/orgs.ts";

export function registerListOrganizations(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(listOrganizationsRoute, async (c) => {
    return c.json(await orgs.listOrganizations(ctx, requesterOf(c), c.req.valid("query")), 200);
  });
}
