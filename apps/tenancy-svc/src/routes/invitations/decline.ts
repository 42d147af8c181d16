import { declineInvitationRoute } from "@agentplane/contracts";
import { requesterOf, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as invitations from "../../services/invitations.ts";

export function registerDeclineInvitation(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(declineInvitationRoute, async (c) => {
    const { invitationId } = c.req.valid("param");
    await invitations.respondToInvitation(ctx, requesterOf(c), { invitationId, answer: "declined" });
    return c.body(null, 204);
  });
}
