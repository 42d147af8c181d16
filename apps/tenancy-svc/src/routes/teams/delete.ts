import { deleteTeamRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as teams from "../../services/teams.ts";
import { authorizeTeam } from "./access.ts";

export function registerDeleteTeam(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(deleteTeamRoute, async (c) => {
    const { teamId } = c.req.valid("param");
    const caller = await authorizeTeam(c, ctx, teamId, "teams:manage");
    await teams.deleteTeam(ctx, caller, { teamId });
    return c.body(null, 204);
  });
}
