import { getProjectJwksRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as projects from "../../services/projects.ts";

export function registerGetProjectJwks(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getProjectJwksRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "project:keys:read", { projectId });
    const jwks = await projects.getProjectJwks(ctx, caller);
    // Verifiers refetch after a rotation anyway; a short cache spares the keys table.
    c.header("cache-control", "max-age=60");
    return c.json(jwks, 200);
  });
}
