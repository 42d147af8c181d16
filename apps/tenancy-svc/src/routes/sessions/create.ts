import { createSessionRoute } from "@agentplane/contracts";
import { requesterOf, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { openSession } from "../../services/sessions.ts";
import { sessionCookie } from "./cookie.ts";

export function registerCreateSession(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(createSessionRoute, async (c) => {
    const opened = await openSession(ctx, requesterOf(c), { userAgent: c.req.header("user-agent") });
    c.header("set-cookie", sessionCookie(c, ctx.config.publicUrl, opened.secret));
    c.header("cache-control", "no-store");
    return c.json({ session: opened.session, csrfToken: opened.csrfToken }, 201);
  });
}
