import { getProjectPublicKeyRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as projects from "../../services/projects.ts";

export function registerGetProjectPublicKey(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getProjectPublicKeyRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "project:keys:read", { projectId });
    return c.json(await projects.getProjectPublicKey(ctx, caller), 200);
  });
}
