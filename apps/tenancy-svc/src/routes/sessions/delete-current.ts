import { deleteCurrentSessionRoute } from "@agentplane/contracts";
import { requesterOf, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { currentSession, revokeSession } from "../../services/sessions.ts";
import { clearedSessionCookie } from "./cookie.ts";

export function registerDeleteCurrentSession(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(deleteCurrentSessionRoute, async (c) => {
    const caller = requesterOf(c);
    const session = await currentSession(ctx, caller);
    await revokeSession(ctx, caller, { sessionId: session.id });
    c.header("set-cookie", clearedSessionCookie(c, ctx.config.publicUrl));
    return c.body(null, 204);
  });
}
