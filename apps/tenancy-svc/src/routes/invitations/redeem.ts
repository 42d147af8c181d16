import { redeemInvitationRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { redeemInvitation } from "../../services/invitation-links.ts";
import { sessionCookie } from "../sessions/cookie.ts";

export function registerRedeemInvitation(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(redeemInvitationRoute, async (c) => {
    const { invitationId } = c.req.valid("param");
    const body = c.req.valid("json");
    const redeemed = await redeemInvitation(ctx, {
      invitationId,
      token: body.token,
      displayName: body.displayName,
      userAgent: c.req.header("user-agent"),
      requestId: c.get("requestId"),
    });
    c.header("set-cookie", sessionCookie(c, ctx.config.publicUrl, redeemed.secret));
    c.header("cache-control", "no-store");
    return c.json({ acceptance: redeemed.acceptance, session: redeemed.session, csrfToken: redeemed.csrfToken }, 201);
  });
}
