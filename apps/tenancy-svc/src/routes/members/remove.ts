import { removeMemberRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as members from "../../services/members.ts";

export function registerRemoveMember(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(removeMemberRoute, async (c) => {
    const { orgId, userId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "members:manage", { orgId });
    await members.removeMember(ctx, caller, { userId });
    return c.body(null, 204);
  });
}
