import { previewInvitationRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { previewInvitation } from "../../services/invitation-links.ts";

export function registerPreviewInvitation(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(previewInvitationRoute, async (c) => {
    const { invitationId } = c.req.valid("param");
    c.header("cache-control", "no-store");
    return c.json(await previewInvitation(ctx, { invitationId, token: c.req.valid("json").token }), 200);
  });
}
