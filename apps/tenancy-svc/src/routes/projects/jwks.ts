import { getProjectJwksRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { publishedKeys } from "../../keys/signing-keys.ts";

export function registerGetProjectJwks(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getProjectJwksRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    await authorize(c, ctx.authorizer, "project:keys:read", { projectId });
    const keys = await publishedKeys(ctx.db, projectId);
    // Verifiers refetch after a rotation anyway; a short cache spares the keys table.
    c.header("cache-control", "max-age=60");
    return c.json({ keys }, 200);
  });
}
