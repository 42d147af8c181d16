import { removeTeamMemberRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as teams from "../../services/teams.ts";
import { authorizeTeam } from "./access.ts";

export function registerRemoveTeamMember(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(removeTeamMemberRoute, async (c) => {
    const { teamId, userId } = c.req.valid("param");
    const caller = await authorizeTeam(c, ctx, teamId, "teams:manage");
    await teams.removeTeamMember(ctx, caller, { teamId, userId });
    return c.body(null, 204);
  });
}
