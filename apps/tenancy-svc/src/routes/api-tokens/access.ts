import { type ApiToken, minOrgRole, type OrgRole, orgRoleAtLeast } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { authorize, type Caller, type Requester, requesterOf, type ServiceContext } from "@agentplane/service-kit";
import { actorOf } from "../../authz/local-authorizer.ts";
import type { TenancyContext } from "../../context.ts";
import { getApiTokenRow, memberRole } from "../../services/api-tokens.ts";
import { personalActor, personalTokenVisible, requireTokensScope } from "../../services/personal-tokens.ts";
import { toApiToken } from "../../services/serialize.ts";

/**
 * A token the caller may see and revoke: its user's own tokens ranked at most the caller's role, or
 * any token of an org where the caller is admin. Anything else (another org's token included)
 * answers 404. With `forChange`, a token that ranks above the caller answers 403: someone else's
 * token ranks as its user's role (an admin cannot revoke the access of an owner), one's own as the
 * lower of the token's role and the user's (an owner's admin-role token cannot revoke the owner's
 * owner-role tokens; a token acts with the lower of its own role and its user's, everywhere).
 * Returns the token with the caller: the one `authorize` returned, or the requester for a personal
 * token, which belongs to no org (its own user alone sees it, ranked as in `personal-tokens.ts`).
 */
export async function visibleToken(
  c: ServiceContext,
  ctx: TenancyContext,
  tokenId: string,
  options: { forChange?: boolean } = {},
): Promise<{ token: ApiToken; caller: Caller | Requester }> {
  const requester = requesterOf(c);
  const { principal } = requester;
  const notFound = new ProblemError("not-found", { detail: `API token ${tokenId} was not found` });
  const row = await getApiTokenRow(ctx.db, tokenId);
  if (!row) throw notFound;
  const token = toApiToken(row);
  const actor = actorOf(principal);
  if (!actor) throw notFound;
  if (!row.org_id) {
    // A personal token belongs to no org: only its own user sees it, or a personal token of that
    // user ranked at least as high (an owner's member-role token does not reach the owner token).
    const personal = personalActor(requester);
    if (!personal || row.user_id !== personal.userId) throw notFound;
    if (!(await personalTokenVisible(ctx.db, personal, row.role as OrgRole))) throw notFound;
    requireTokensScope(requester);
    return { token, caller: requester };
  }
  const caller = await authorize(c, ctx.authorizer, "api-tokens:manage", {
    orgId: row.org_id,
    resource: `API token ${tokenId}`,
  });
  // The caller's role is already the lower of its token's role and its user's role.
  const callerRole = caller.orgRole;
  const isAdmin = callerRole === "owner" || callerRole === "admin";
  const ownUser = row.user_id === actor.userId;
  const userRole = await memberRole(ctx.db, row.org_id, row.user_id);
  // The token acts for its user: the lower of the two roles (its own role when the user has left).
  const tokenRank = userRole ? minOrgRole(row.role as OrgRole, userRole) : (row.role as OrgRole);
  if (!isAdmin && (!ownUser || !orgRoleAtLeast(callerRole, tokenRank))) throw notFound;
  if (options.forChange) {
    const targetRole = ownUser ? tokenRank : (userRole ?? tokenRank);
    if (!orgRoleAtLeast(callerRole, targetRole)) {
      throw new ProblemError("forbidden", {
        detail: ownUser
          ? `This token acts as ${targetRole}; only a token or user acting as ${targetRole} or above can change it`
          : `This token belongs to a ${targetRole}; only a ${targetRole} or above can change it`,
      });
    }
  }
  return { token, caller };
}
