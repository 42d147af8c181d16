import { updateCredentialRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { updateCredential } from "../../services/credentials.ts";

/** Changes a credential's metadata or rotates its secret (project admins). */
export function registerUpdateCredential(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(updateCredentialRoute, async (c) => {
    const { projectId, credentialId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "credentials:manage", { projectId });
    return c.json(await updateCredential(ctx, caller, { credentialId, ...c.req.valid("json") }), 200);
  });
}
