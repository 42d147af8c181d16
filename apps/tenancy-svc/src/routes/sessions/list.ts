import { listSessionsRoute } from "@agentplane/contracts";
import { requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as sessions from "../../services/sessions.ts";

export function registerListSessions(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(listSessionsRoute, async (c) => {
    return c.json({ items: await sessions.listSessions(ctx, requirePrincipal(c)) }, 200);
  });
}
