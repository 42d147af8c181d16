import { idPattern, internalResolveOrgRoute } from "@agentplane/contracts";
import { badRequest, ProblemError } from "@agentplane/problem-details";
import { callInternal, type ServiceClient, servicePrincipal } from "@agentplane/service-kit";

const CALLER = servicePrincipal("connections");
const TEAM_ID = idPattern("team");

/**
 * Checks that every team a tool is restricted to is a team of the connector's organization, asking
 * tenancy which organization each id belongs to. Unknown ids, ids of other kinds and teams of another
 * organization get the same 400 problem naming `/body/teams/<i>` (nothing tells another
 * organization's team from one that does not exist).
 */
export async function checkTeamsOfOrg(
  tenancy: ServiceClient | undefined,
  orgId: string,
  teams: readonly string[],
): Promise<void> {
  if (!teams.length) return;
  if (!tenancy) {
    throw new ProblemError("service-unavailable", {
      detail: "Restricting a tool to teams needs the tenancy service to check the team ids",
    });
  }
  const orgs = new Map<string, Promise<string | undefined>>();
  const orgOf = (teamId: string) => {
    let org = orgs.get(teamId);
    if (!org) {
      org = TEAM_ID.test(teamId)
        ? callInternal(tenancy, internalResolveOrgRoute, {
            principal: CALLER,
            params: { resourceId: teamId },
          }).then(
            (answer) => answer.orgId,
            (error: unknown) => {
              if (error instanceof ProblemError && error.status === 404) return undefined;
              throw error;
            },
          )
        : Promise.resolve(undefined);
      orgs.set(teamId, org);
    }
    return org;
  };
  const found = await Promise.all(teams.map(orgOf));
  const errors = teams.flatMap((teamId, i) =>
    found[i] === orgId
      ? []
      : [{ pointer: `/body/teams/${i}`, message: `${teamId} is not a team of this organization` }],
  );
  if (errors.length) throw badRequest("A tool can only be restricted to teams of the connector's organization", errors);
}
