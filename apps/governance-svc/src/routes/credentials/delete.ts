import { deleteCredentialRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { deleteCredential } from "../../services/credentials.ts";

/** Deletes a credential (project admins). */
export function registerDeleteCredential(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(deleteCredentialRoute, async (c) => {
    const { projectId, credentialId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "credentials:manage", { projectId });
    await deleteCredential(ctx, caller, { credentialId });
    return c.body(null, 204);
  });
}
