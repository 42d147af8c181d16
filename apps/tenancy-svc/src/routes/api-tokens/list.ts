import { listApiTokens } from "@agentplane/contracts";
import { authorize, requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import { actorOf } from "../../authz/local-authorizer.ts";
import type { TenancyContext } from "../../context.ts";
import { listApiTokenRows } from "../../services/api-tokens.ts";
import { page, toApiToken } from "../../services/serialize.ts";

export function registerListApiTokens(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(listApiTokens, async (c) => {
    const { orgId } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    const decision = await authorize(c, ctx.authorizer, "api-tokens:manage", { orgId });
    // Admins see every token of the org; others only their own.
    const own = decision.orgRole !== "owner" && decision.orgRole !== "admin";
    const rows = await listApiTokenRows(ctx.db, orgId, {
      limit,
      cursor,
      ...(own ? { userId: actorOf(requirePrincipal(c))!.userId } : {}),
    });
    const result = page(rows, limit);
    return c.json(
      { items: result.items.map(toApiToken), ...(result.nextCursor ? { nextCursor: result.nextCursor } : {}) },
      200,
    );
  });
}
