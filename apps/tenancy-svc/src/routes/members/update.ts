import { updateMemberRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as members from "../../services/members.ts";

export function registerUpdateMember(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(updateMemberRoute, async (c) => {
    const { orgId, userId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "members:manage", { orgId });
    const { role } = c.req.valid("json");
    return c.json(await members.updateMemberRole(ctx, caller, { userId, role }), 200);
  });
}
