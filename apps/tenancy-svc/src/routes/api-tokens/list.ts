import { listApiTokensRoute, ORG_ROLES, orgRoleAtLeast } from "@agentplane/contracts";
import { authorize, requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import { actorOf } from "../../authz/local-authorizer.ts";
import type { TenancyContext } from "../../context.ts";
import { listApiTokenRows, memberRole } from "../../services/api-tokens.ts";
import { page, toApiToken } from "../../services/serialize.ts";

export function registerListApiTokens(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(listApiTokensRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    const decision = await authorize(c, ctx.authorizer, "api-tokens:manage", { orgId });
    // Admins see every token of the org; others only their own, ranked at most their own role (a
    // member-role token of an owner does not list the owner's higher tokens).
    const callerRole = decision.orgRole;
    const own = callerRole !== "owner" && callerRole !== "admin";
    const userId = actorOf(requirePrincipal(c))!.userId;
    // A token capped below its user's role: every token of the user ranks at least that cap.
    const capped = own && !orgRoleAtLeast(callerRole, (await memberRole(ctx.db, orgId, userId)) ?? "viewer");
    const rows = await listApiTokenRows(ctx.db, orgId, {
      limit,
      cursor,
      ...(own ? { userId } : {}),
      ...(capped ? { roles: ORG_ROLES.filter((role) => orgRoleAtLeast(callerRole, role)) } : {}),
    });
    const result = page(rows, limit);
    return c.json(
      { items: result.items.map(toApiToken), ...(result.nextCursor ? { nextCursor: result.nextCursor } : {}) },
      200,
    );
  });
}
