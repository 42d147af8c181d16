import { deleteProjectRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as projects from "../../services/projects.ts";

export function registerDeleteProject(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(deleteProjectRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "project:delete", { projectId });
    await projects.deleteProject(ctx, caller);
    return c.body(null, 204);
  });
}
