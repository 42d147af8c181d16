import { removeMemberRoute } from "@agentplane/contracts";
import { authorize, requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as members from "../../services/members.ts";

export function registerRemoveMember(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(removeMemberRoute, async (c) => {
    const { orgId, userId } = c.req.valid("param");
    const decision = await authorize(c, ctx.authorizer, "members:manage", { orgId });
    await members.removeMember({
      ctx,
      principal: requirePrincipal(c),
      callerRole: decision.orgRole!,
      orgId,
      userId,
      requestId: c.get("requestId"),
    });
    return c.body(null, 204);
  });
}
