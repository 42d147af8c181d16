import { getProjectRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { getProjectRow } from "../../services/projects.ts";
import { toProject } from "../../services/serialize.ts";

export function registerGetProject(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getProjectRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const decision = await authorize(c, ctx.authorizer, "project:read", { projectId });
    return c.json(toProject(await getProjectRow(ctx, projectId), decision.projectRole), 200);
  });
}
