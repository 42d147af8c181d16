import type { Principal } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { TenancyContext } from "../context.ts";
import { tokenPrincipal, tokenUsable } from "./api-tokens.ts";

/**
 * The principal a user or an API token acts as, when it can see the project: what the decision
 * API evaluates when a project admin asks on someone else's behalf. Anything else (unknown,
 * revoked, expired, or outside the project) is one 404, so the answer says nothing more.
 */
export async function projectPrincipal(
  ctx: TenancyContext,
  input: { projectId: string; type: "user" | "api_token"; id: string },
): Promise<Principal> {
  const principal = input.type === "user" ? await userOf(ctx, input.id) : await tokenOf(ctx, input.id);
  if (principal && (await ctx.authorizer.projectAccess(principal, input.projectId))) return principal;
  const what = input.type === "user" ? "member" : "API token";
  throw new ProblemError("not-found", { detail: `No ${what} ${input.id} in project ${input.projectId}` });
}

async function userOf(ctx: TenancyContext, userId: string): Promise<Principal | undefined> {
  const user = await ctx.db
    .selectFrom("users")
    .select(["id", "display_name", "email"])
    .where("id", "=", userId)
    .executeTakeFirst();
  if (!user) return undefined;
  const displayName = user.display_name ?? user.email ?? undefined;
  return { type: "user", id: user.id, ...(displayName ? { displayName } : {}) };
}

async function tokenOf(ctx: TenancyContext, tokenId: string): Promise<Principal | undefined> {
  const row = await ctx.db.selectFrom("api_tokens").selectAll().where("id", "=", tokenId).executeTakeFirst();
  return row && tokenUsable(row) ? tokenPrincipal(row) : undefined;
}
