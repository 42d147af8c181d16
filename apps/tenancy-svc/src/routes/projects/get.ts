import { getProjectRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as projects from "../../services/projects.ts";

export function registerGetProject(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getProjectRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "project:read", { projectId });
    return c.json(await projects.getProject(ctx, caller), 200);
  });
}
