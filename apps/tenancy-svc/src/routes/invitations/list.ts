import { listInvitationsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as invitations from "../../services/invitations.ts";

export function registerListInvitations(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(listInvitationsRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    await authorize(c, ctx.authorizer, "invitations:manage", { orgId });
    return c.json(await invitations.listOrgInvitations(ctx, orgId, c.req.valid("query")), 200);
  });
}
