import type { Permission } from "@agentplane/contracts";
import { authorize, type Caller, type ServiceContext } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { teamOrgId } from "../../services/teams.ts";

/** Authorizes against the team's organization; another org's team answers 404 like an unknown one. */
export async function authorizeTeam(
  c: ServiceContext,
  ctx: TenancyContext,
  teamId: string,
  permission: Permission,
): Promise<Caller> {
  // The 404 names the team, as for an unknown one: never the organization it was found in.
  return authorize(c, ctx.authorizer, permission, {
    orgId: await teamOrgId(ctx, teamId),
    resource: `Team ${teamId}`,
  });
}
