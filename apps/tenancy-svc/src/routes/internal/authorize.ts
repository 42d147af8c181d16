import { TENANCY_INTERNAL_ROUTES as R } from "@agentplane/contracts";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";

export function registerInternalAuthorize(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(internalRoute(R.authorize), async (c) => {
    const request = c.req.valid("json");
    return c.json(await ctx.authorizer.check(request), 200);
  });
}
