import { deleteCurrentSessionRoute } from "@agentplane/contracts";
import { requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { currentSession, revokeSession } from "../../services/sessions.ts";
import { clearedSessionCookie } from "./cookie.ts";

export function registerDeleteCurrentSession(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(deleteCurrentSessionRoute, async (c) => {
    const principal = requirePrincipal(c);
    const session = await currentSession(ctx, principal);
    await revokeSession(ctx, principal, session.id);
    c.header("set-cookie", clearedSessionCookie(c));
    return c.body(null, 204);
  });
}
