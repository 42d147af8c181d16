import { revokeInvitationRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as invitations from "../../services/invitations.ts";

export function registerRevokeInvitation(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(revokeInvitationRoute, async (c) => {
    const { orgId, invitationId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "invitations:manage", { orgId });
    await invitations.revokeInvitation(ctx, caller, { invitationId });
    return c.body(null, 204);
  });
}
