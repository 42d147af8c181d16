import { declineInvitationRoute } from "@agentplane/contracts";
import { requesterOf, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as invitations from "../../services/invitations.ts";

export function registerDeclineInvitation(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(declineInvitationRoute, async (c) => {
    const { invitationId } = c.req.valid("param");
    // The body is optional: a user whose email an identity provider vouches for sends none.
    const body: { token?: string | undefined } = c.req.valid("json") ?? {};
    await invitations.respondToInvitation(ctx, requesterOf(c), { invitationId, answer: "declined", token: body.token });
    return c.body(null, 204);
  });
}
