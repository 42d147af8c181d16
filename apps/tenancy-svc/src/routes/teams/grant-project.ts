import { grantTeamProjectRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as teams from "../../services/teams.ts";
import { authorizeTeam } from "./access.ts";

export function registerGrantTeamProject(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(grantTeamProjectRoute, async (c) => {
    const { teamId, projectId } = c.req.valid("param");
    const caller = await authorizeTeam(c, ctx, teamId, "teams:manage");
    const { role } = c.req.valid("json");
    return c.json(await teams.grantTeamProject(ctx, caller, { teamId, projectId, role }), 200);
  });
}
