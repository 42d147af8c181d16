import { updateProjectRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as projects from "../../services/projects.ts";
import { toProject } from "../../services/serialize.ts";

export function registerUpdateProject(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(updateProjectRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const decision = await authorize(c, ctx.authorizer, "project:update", { projectId });
    const row = await projects.updateProject(ctx, projectId, c.req.valid("json"));
    return c.json(toProject(row, decision.projectRole), 200);
  });
}
