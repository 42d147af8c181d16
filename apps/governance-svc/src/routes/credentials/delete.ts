import { deleteCredentialRoute } from "@agentplane/contracts";
import { deleteCredential } from "../../services/credentials.ts";
import { callerOf, projectScope, type RouteDeps } from "../scope.ts";

/** Deletes a credential (project admins). */
export function registerDeleteCredential({ app, ctx }: RouteDeps): void {
  app.openapi(deleteCredentialRoute, async (c) => {
    const { projectId, credentialId } = c.req.valid("param");
    await deleteCredential(ctx, callerOf(c), await projectScope(c, ctx, "credentials:manage", projectId), credentialId);
    return c.body(null, 204);
  });
}
