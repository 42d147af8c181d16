import { grantTeamProjectRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as teams from "../../services/teams.ts";
import { authorizeTeam } from "./access.ts";

export function registerGrantTeamProject(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(grantTeamProjectRoute, async (c) => {
    const { teamId, projectId } = c.req.valid("param");
    const orgId = await authorizeTeam(c, ctx, teamId, "teams:manage");
    return c.json(await teams.grantTeamProject(ctx, orgId, teamId, projectId, c.req.valid("json").role), 200);
  });
}
