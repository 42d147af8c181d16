import { getCurrentSessionRoute } from "@agentplane/contracts";
import { requesterOf, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { csrfTokenOf, currentSession } from "../../services/sessions.ts";

export function registerGetCurrentSession(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getCurrentSessionRoute, async (c) => {
    const session = await currentSession(ctx, requesterOf(c));
    c.header("cache-control", "no-store");
    return c.json({ session, csrfToken: csrfTokenOf(ctx, session.id) }, 200);
  });
}
