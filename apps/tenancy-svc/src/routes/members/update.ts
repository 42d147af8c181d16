import { updateMemberRoute } from "@agentplane/contracts";
import { authorize, requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as members from "../../services/members.ts";

export function registerUpdateMember(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(updateMemberRoute, async (c) => {
    const { orgId, userId } = c.req.valid("param");
    const decision = await authorize(c, ctx.authorizer, "members:manage", { orgId });
    const member = await members.updateMemberRole(
      {
        ctx,
        principal: requirePrincipal(c),
        callerRole: decision.orgRole!,
        orgId,
        userId,
        requestId: c.get("requestId"),
      },
      c.req.valid("json").role,
    );
    return c.json(member, 200);
  });
}
