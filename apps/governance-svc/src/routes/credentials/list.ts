import { listCredentialsRoute } from "@agentplane/contracts";
import { listCredentials } from "../../services/credentials.ts";
import { projectScope, type RouteDeps } from "../scope.ts";

/** A project's credentials, metadata only (project admins); never a secret field. */
export function registerListCredentials({ app, ctx }: RouteDeps): void {
  app.openapi(listCredentialsRoute, async (c) => {
    const scope = await projectScope(c, ctx, "credentials:manage", c.req.valid("param").projectId);
    return c.json(await listCredentials(ctx, scope, c.req.valid("query")), 200);
  });
}
