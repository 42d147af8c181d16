import { updateTeamRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as teams from "../../services/teams.ts";
import { authorizeTeam } from "./access.ts";

export function registerUpdateTeam(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(updateTeamRoute, async (c) => {
    const { teamId } = c.req.valid("param");
    const caller = await authorizeTeam(c, ctx, teamId, "teams:manage");
    return c.json(await teams.updateTeam(ctx, caller, { teamId, ...c.req.valid("json") }), 200);
  });
}
