import { deleteCredentialRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { deleteCredential } from "../../services/credentials.ts";
import { callerOf, projectScope } from "../scope.ts";

/** Deletes a credential (project admins). */
export function registerDeleteCredential(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(deleteCredentialRoute, async (c) => {
    const { projectId, credentialId } = c.req.valid("param");
    await deleteCredential(ctx, callerOf(c), await projectScope(c, ctx, "credentials:manage", projectId), credentialId);
    return c.body(null, 204);
  });
}
