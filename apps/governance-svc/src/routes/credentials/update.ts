import { updateCredentialRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { updateCredential } from "../../services/credentials.ts";
import { callerOf, projectScope } from "../scope.ts";

/** Changes a credential's metadata or rotates its secret (project admins). */
export function registerUpdateCredential(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(updateCredentialRoute, async (c) => {
    const { projectId, credentialId } = c.req.valid("param");
    const scope = await projectScope(c, ctx, "credentials:manage", projectId);
    return c.json(await updateCredential(ctx, callerOf(c), scope, credentialId, c.req.valid("json")), 200);
  });
}
