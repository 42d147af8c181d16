import { listInvitationsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { withAcceptUrl } from "../../services/invitation-links.ts";
import * as invitations from "../../services/invitations.ts";
import { forwardedOrigin } from "../forwarded-origin.ts";

export function registerListInvitations(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(listInvitationsRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "invitations:manage", { orgId });
    const listed = await invitations.listOrgInvitations(ctx, caller, c.req.valid("query"));
    const origin = forwardedOrigin(c.req.raw.headers);
    return c.json({ ...listed, items: listed.items.map((i) => withAcceptUrl(ctx, i, origin)) }, 200);
  });
}
