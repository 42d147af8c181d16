import { internalProjectPrincipalRoute } from "@agentplane/contracts";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { projectPrincipal } from "../../services/project-principals.ts";

export function registerInternalProjectPrincipal(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(internalRoute(internalProjectPrincipalRoute), async (c) => {
    const { projectId } = c.req.valid("param");
    const principal = await projectPrincipal(ctx, { projectId, ...c.req.valid("json") });
    return c.json({ principal }, 200);
  });
}
