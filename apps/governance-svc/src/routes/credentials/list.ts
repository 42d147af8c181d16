import { listCredentialsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { listCredentials } from "../../services/credentials.ts";

/** A project's credentials, metadata only (project admins); never a secret field. */
export function registerListCredentials(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(listCredentialsRoute, async (c) => {
    const caller = await authorize(c, ctx.authorizer, "credentials:manage", {
      projectId: c.req.valid("param").projectId,
    });
    return c.json(await listCredentials(ctx, caller, c.req.valid("query")), 200);
  });
}
