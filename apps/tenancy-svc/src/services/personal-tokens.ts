import { type ApiToken, minOrgRole, ORG_ROLES, type OrgRole, orgRoleAtLeast } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { Requester } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import { type Actor, actorOf } from "../authz/local-authorizer.ts";
import { requireTokenScope } from "../authz/token-scope.ts";
import type { TenancyContext } from "../context.ts";
import type { TenancyDatabase } from "../db/schema.ts";
import { page, toApiToken } from "./serialize.ts";

type Db = Kysely<TenancyDatabase>;

/*
 * Personal tokens are bound to no organization: the installation owner token and the tokens a
 * device sign-in mints. They act in each organization with their user's role there, never above
 * their own role, so among them a token ranks as the lower of its role and its user's highest role
 * (its own role when the user belongs to no organization).
 */

/** The highest role the user holds in any organization, if a member of one. */
export async function highestOrgRole(db: Db, userId: string): Promise<OrgRole | undefined> {
  const rows = await db.selectFrom("org_members").select("role").where("user_id", "=", userId).execute();
  let highest: OrgRole | undefined;
  for (const { role } of rows) if (!highest || !orgRoleAtLeast(highest, role as OrgRole)) highest = role as OrgRole;
  return highest;
}

function rankOf(role: OrgRole, userRole: OrgRole | undefined): OrgRole {
  return userRole ? minOrgRole(role, userRole) : role;
}

/**
 * The caller's user, if it may see that user's personal tokens at all: a person, or one of their
 * personal tokens; a token bound to an organization or a project sees none.
 */
export function personalActor(requester: Requester): Actor | undefined {
  const actor = actorOf(requester.principal);
  if (!actor || actor.orgId || actor.projectId) return undefined;
  return actor;
}

/** Personal tokens are read and revoked under the permission of every API token. */
export function requireTokensScope(requester: Requester): void {
  requireTokenScope(requester, "api-tokens:manage");
}

/**
 * The highest role among the user's personal tokens the caller sees, or undefined when it sees
 * them all (a person, or a token that ranks as high as its user).
 */
export async function personalRankCeiling(db: Db, actor: Actor): Promise<OrgRole | undefined> {
  if (!actor.cap) return undefined;
  const userRole = await highestOrgRole(db, actor.userId);
  const callerRank = rankOf(actor.cap, userRole);
  return userRole && orgRoleAtLeast(callerRank, userRole) ? undefined : callerRank;
}

/** Whether a personal token of the caller's own user ranks at most the caller. */
export async function personalTokenVisible(db: Db, actor: Actor, tokenRole: OrgRole): Promise<boolean> {
  const ceiling = await personalRankCeiling(db, actor);
  return !ceiling || orgRoleAtLeast(ceiling, tokenRole);
}

/**
 * One page of the caller's personal tokens (by id), revoked and expired ones included; a token
 * caller sees only those ranked at most itself. Secrets are never part of a token's record.
 */
export async function listMyApiTokens(
  ctx: TenancyContext,
  requester: Requester,
  query: { limit: number; cursor?: string | undefined },
): Promise<{ items: ApiToken[]; nextCursor?: string }> {
  requireTokensScope(requester);
  const actor = personalActor(requester);
  if (!actor) {
    throw new ProblemError("forbidden", {
      detail:
        "Only a person or one of their personal tokens lists personal tokens; this token is bound to an organization",
    });
  }
  const ceiling = await personalRankCeiling(ctx.db, actor);
  let q = ctx.db
    .selectFrom("api_tokens")
    .selectAll()
    .where("user_id", "=", actor.userId)
    .where("org_id", "is", null)
    .orderBy("id")
    .limit(query.limit + 1);
  if (ceiling)
    q = q.where(
      "role",
      "in",
      ORG_ROLES.filter((role) => orgRoleAtLeast(ceiling, role)),
    );
  if (query.cursor) q = q.where("id", ">", query.cursor);
  const result = page(await q.execute(), query.limit);
  return { items: result.items.map(toApiToken), ...(result.nextCursor ? { nextCursor: result.nextCursor } : {}) };
}
