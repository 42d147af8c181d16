import { getTeamRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as teams from "../../services/teams.ts";
import { authorizeTeam } from "./access.ts";

export function registerGetTeam(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getTeamRoute, async (c) => {
    const { teamId } = c.req.valid("param");
    const caller = await authorizeTeam(c, ctx, teamId, "teams:read");
    return c.json(await teams.getTeam(ctx, caller, { teamId }), 200);
  });
}
