import { addTeamMemberRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as teams from "../../services/teams.ts";
import { authorizeTeam } from "./access.ts";

export function registerAddTeamMember(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(addTeamMemberRoute, async (c) => {
    const { teamId, userId } = c.req.valid("param");
    const caller = await authorizeTeam(c, ctx, teamId, "teams:manage");
    return c.json(await teams.addTeamMember(ctx, caller, { teamId, userId }), 200);
  });
}
