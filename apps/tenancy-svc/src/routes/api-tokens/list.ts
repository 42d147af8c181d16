import { listApiTokens } from "@agentplane/contracts";
import { authorize, requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import { actorOf } from "../../authz/local-authorizer.ts";
import type { TenancyContext } from "../../context.ts";
import { page, toApiToken } from "../../services/serialize.ts";

export function registerListApiTokens(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(listApiTokens, async (c) => {
    const { orgId } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    const decision = await authorize(c, ctx.authorizer, "api-tokens:manage", { orgId });
    let q = ctx.db
      .selectFrom("api_tokens")
      .selectAll()
      .where("org_id", "=", orgId)
      .orderBy("id")
      .limit(limit + 1);
    // Admins see every token of the org; others only their own.
    if (decision.orgRole !== "owner" && decision.orgRole !== "admin") {
      q = q.where("user_id", "=", actorOf(requirePrincipal(c))!.userId);
    }
    if (cursor) q = q.where("id", ">", cursor);
    const result = page(await q.execute(), limit);
    return c.json(
      { items: result.items.map(toApiToken), ...(result.nextCursor ? { nextCursor: result.nextCursor } : {}) },
      200,
    );
  });
}
