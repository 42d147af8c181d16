import { createProjectRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as projects from "../../services/projects.ts";

export function registerCreateProject(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(createProjectRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "projects:create", { orgId });
    return c.json(await projects.createProject(ctx, caller, c.req.valid("json")), 201);
  });
}
