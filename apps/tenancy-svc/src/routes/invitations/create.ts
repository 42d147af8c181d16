import { createInvitationRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { withAcceptUrl } from "../../services/invitation-links.ts";
import * as invitations from "../../services/invitations.ts";
import { forwardedOrigin } from "../forwarded-origin.ts";

export function registerCreateInvitation(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(createInvitationRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "invitations:manage", { orgId });
    const invitation = await invitations.createInvitation(ctx, caller, c.req.valid("json"));
    return c.json(withAcceptUrl(ctx, invitation, forwardedOrigin(c.req.raw.headers)), 201);
  });
}
