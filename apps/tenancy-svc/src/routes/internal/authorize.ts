import { internalAuthorizeRoute } from "@agentplane/contracts";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";

export function registerInternalAuthorize(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(internalRoute(internalAuthorizeRoute), async (c) => {
    const request = c.req.valid("json");
    return c.json(await ctx.authorizer.check(request), 200);
  });
}
