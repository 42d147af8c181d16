import { createApiTokenRoute } from "@agentplane/contracts";
import { authorize, requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import { actorOf } from "../../authz/local-authorizer.ts";
import type { TenancyContext } from "../../context.ts";
import * as tokens from "../../services/api-tokens.ts";

export function registerCreateApiToken(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(createApiTokenRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const decision = await authorize(c, ctx.authorizer, "api-tokens:manage", { orgId });
    const principal = requirePrincipal(c);
    const created = await tokens.createApiToken({
      ctx,
      principal,
      creatorRole: decision.orgRole!,
      userId: actorOf(principal)!.userId,
      orgId,
      input: c.req.valid("json"),
      requestId: c.get("requestId"),
    });
    return c.json(created, 201);
  });
}
