import { listProjectsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as projects from "../../services/projects.ts";

export function registerListProjects(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(listProjectsRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "projects:list", { orgId });
    return c.json(await projects.listProjects(ctx, caller, c.req.valid("query")), 200);
  });
}
