import { listCredentialsRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { listCredentials } from "../../services/credentials.ts";
import { projectScope } from "../scope.ts";

/** A project's credentials, metadata only (project admins); never a secret field. */
export function registerListCredentials(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(listCredentialsRoute, async (c) => {
    const scope = await projectScope(c, ctx, "credentials:manage", c.req.valid("param").projectId);
    return c.json(await listCredentials(ctx, scope, c.req.valid("query")), 200);
  });
}
