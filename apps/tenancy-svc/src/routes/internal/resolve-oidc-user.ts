import { internalResolveOidcUserRoute } from "@agentplane/contracts";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { resolveOidcUser, userPrincipal } from "../../services/users.ts";

export function registerInternalResolveOidcUser(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(internalRoute(internalResolveOidcUserRoute), async (c) => {
    const input = c.req.valid("json");
    const user = await resolveOidcUser(ctx.db, input);
    return c.json({ principal: userPrincipal(user) }, 200);
  });
}
