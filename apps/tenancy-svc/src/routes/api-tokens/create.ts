import { createApiTokenRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as tokens from "../../services/api-tokens.ts";

export function registerCreateApiToken(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(createApiTokenRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "api-tokens:manage", { orgId });
    return c.json(await tokens.createApiToken(ctx, caller, c.req.valid("json")), 201);
  });
}
