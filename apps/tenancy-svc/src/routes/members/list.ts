import { listMembersRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as members from "../../services/members.ts";

export function registerListMembers(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(listMembersRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "members:read", { orgId });
    return c.json(await members.listMembers(ctx, caller, c.req.valid("query")), 200);
  });
}
