import { acceptInvitationRoute } from "@agentplane/contracts";
import { requesterOf, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as invitations from "../../services/invitations.ts";

export function registerAcceptInvitation(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(acceptInvitationRoute, async (c) => {
    const { invitationId } = c.req.valid("param");
    // The body is optional: a user whose email an identity provider vouches for sends none.
    const body: { token?: string | undefined } = c.req.valid("json") ?? {};
    const result = await invitations.respondToInvitation(ctx, requesterOf(c), {
      invitationId,
      answer: "accepted",
      token: body.token,
    });
    return c.json(result, 200);
  });
}
