import { listSessionsRoute } from "@agentplane/contracts";
import { requesterOf, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as sessions from "../../services/sessions.ts";

export function registerListSessions(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(listSessionsRoute, async (c) => {
    return c.json({ items: await sessions.listSessions(ctx, requesterOf(c)) }, 200);
  });
}
