import { listMyInvitationsRoute } from "@agentplane/contracts";
import { requesterOf, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as invitations from "../../services/invitations.ts";

export function registerListMyInvitations(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(listMyInvitationsRoute, async (c) => {
    return c.json({ items: await invitations.listMyInvitations(ctx, requesterOf(c)) }, 200);
  });
}
