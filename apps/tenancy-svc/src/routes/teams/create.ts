import { createTeamRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as teams from "../../services/teams.ts";

export function registerCreateTeam(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(createTeamRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "teams:manage", { orgId });
    return c.json(await teams.createTeam(ctx, caller, c.req.valid("json")), 201);
  });
}
