import { listApiTokensRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as tokens from "../../services/api-tokens.ts";

export function registerListApiTokens(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(listApiTokensRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "api-tokens:manage", { orgId });
    return c.json(await tokens.listApiTokens(ctx, caller, c.req.valid("query")), 200);
  });
}
