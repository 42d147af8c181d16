import { revokeSessionRoute } from "@agentplane/contracts";
import { requesterOf, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as sessions from "../../services/sessions.ts";

export function registerRevokeSession(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(revokeSessionRoute, async (c) => {
    await sessions.revokeSession(ctx, requesterOf(c), { sessionId: c.req.valid("param").sessionId });
    return c.body(null, 204);
  });
}
