import { listTeamsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as teams from "../../services/teams.ts";

export function registerListTeams(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(listTeamsRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "teams:read", { orgId });
    return c.json(await teams.listTeams(ctx, caller, c.req.valid("query")), 200);
  });
}
