import { getMemberRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as members from "../../services/members.ts";

export function registerGetMember(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getMemberRoute, async (c) => {
    const { orgId, userId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "members:read", { orgId });
    return c.json(await members.getMember(ctx, caller, { userId }), 200);
  });
}
