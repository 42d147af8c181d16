import { type ApiToken, type OrgRole, orgRoleAtLeast } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { authorize, requirePrincipal, type ServiceContext } from "@agentplane/service-kit";
import { actorOf } from "../../authz/local-authorizer.ts";
import type { TenancyContext } from "../../context.ts";
import { getApiTokenRow, memberRole } from "../../services/api-tokens.ts";
import { toApiToken } from "../../services/serialize.ts";

/**
 * A token the caller may see and revoke: its own tokens, or any token of an org where the caller
 * is admin. Anything else (another org's token included) answers 404. With `forChange`, a token of
 * someone else whose role is above the caller's (an owner's token, for an admin) answers 403.
 */
export async function visibleToken(
  c: ServiceContext,
  ctx: TenancyContext,
  tokenId: string,
  options: { forChange?: boolean } = {},
): Promise<ApiToken> {
  const principal = requirePrincipal(c);
  const notFound = new ProblemError("not-found", { detail: `API token ${tokenId} was not found` });
  const row = await getApiTokenRow(ctx.db, tokenId);
  if (!row) throw notFound;
  const token = toApiToken(row);
  const actor = actorOf(principal);
  if (!actor) throw notFound;
  if (!row.org_id) {
    // The installation owner token belongs to no org: only its own user sees it.
    if (row.user_id !== actor.userId || actor.orgId) throw notFound;
    return token;
  }
  let decision: Awaited<ReturnType<typeof authorize>>;
  try {
    decision = await authorize(c, ctx.authorizer, "api-tokens:manage", { orgId: row.org_id });
  } catch (err) {
    if (err instanceof ProblemError && err.status === 404) throw notFound;
    throw err;
  }
  const isAdmin = decision.orgRole === "owner" || decision.orgRole === "admin";
  if (row.user_id !== actor.userId && !isAdmin) throw notFound;
  if (options.forChange && row.user_id !== actor.userId) {
    // The token acts for its user: it ranks as that user's role in the org (its own role when the
    // user has left), so an admin cannot revoke the access of an owner.
    const targetRole = (await memberRole(ctx.db, row.org_id, row.user_id)) ?? (row.role as OrgRole);
    if (!orgRoleAtLeast(decision.orgRole, targetRole)) {
      throw new ProblemError("forbidden", {
        detail: `This token belongs to a ${targetRole}; only a ${targetRole} or above can change it`,
      });
    }
  }
  return token;
}
