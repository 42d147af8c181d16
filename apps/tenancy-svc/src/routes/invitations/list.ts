import { listInvitationsRoute, orgRoleAtLeast } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { orgRoleOf } from "../../services/caller.ts";
import { withAcceptUrl } from "../../services/invitation-links.ts";
import * as invitations from "../../services/invitations.ts";
import { forwardedOrigin } from "../forwarded-origin.ts";

export function registerListInvitations(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(listInvitationsRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "invitations:manage", { orgId });
    const listed = await invitations.listOrgInvitations(ctx, caller, c.req.valid("query"));
    const origin = forwardedOrigin(c.req.raw.headers);
    // A link joins its holder with the invitation's role: only who could have sent it gets it (an
    // admin holding an owner invitation's link could redeem it and own the organization).
    const role = orgRoleOf(caller);
    const items = listed.items.map((i) => (orgRoleAtLeast(role, i.role) ? withAcceptUrl(ctx, i, origin) : i));
    return c.json({ ...listed, items }, 200);
  });
}
