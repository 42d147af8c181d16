import { acceptInvitationRoute } from "@agentplane/contracts";
import { requesterOf, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as invitations from "../../services/invitations.ts";

export function registerAcceptInvitation(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(acceptInvitationRoute, async (c) => {
    const { invitationId } = c.req.valid("param");
    const result = await invitations.respondToInvitation(ctx, requesterOf(c), { invitationId, answer: "accepted" });
    return c.json(result, 200);
  });
}
