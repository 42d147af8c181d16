import { updateProjectRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as projects from "../../services/projects.ts";

export function registerUpdateProject(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(updateProjectRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "project:update", { projectId });
    return c.json(await projects.updateProject(ctx, caller, c.req.valid("json")), 200);
  });
}
