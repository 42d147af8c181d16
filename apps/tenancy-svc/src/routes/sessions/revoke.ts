import { revokeSessionRoute } from "@agentplane/contracts";
import { requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as sessions from "../../services/sessions.ts";

export function registerRevokeSession(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(revokeSessionRoute, async (c) => {
    await sessions.revokeSession(ctx, requirePrincipal(c), c.req.valid("param").sessionId);
    return c.body(null, 204);
  });
}
