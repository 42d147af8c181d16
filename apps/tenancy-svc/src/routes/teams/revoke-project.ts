import { revokeTeamProjectRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as teams from "../../services/teams.ts";
import { authorizeTeam } from "./access.ts";

export function registerRevokeTeamProject(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(revokeTeamProjectRoute, async (c) => {
    const { teamId, projectId } = c.req.valid("param");
    const caller = await authorizeTeam(c, ctx, teamId, "teams:manage");
    await teams.revokeTeamProject(ctx, caller, { teamId, projectId });
    return c.body(null, 204);
  });
}
