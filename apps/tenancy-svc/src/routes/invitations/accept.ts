import { acceptInvitationRoute } from "@agentplane/contracts";
import { requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as invitations from "../../services/invitations.ts";

export function registerAcceptInvitation(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(acceptInvitationRoute, async (c) => {
    const { invitationId } = c.req.valid("param");
    const result = await invitations.respondToInvitation(
      ctx,
      requirePrincipal(c),
      invitationId,
      "accepted",
      c.get("requestId"),
    );
    return c.json(result, 200);
  });
}
