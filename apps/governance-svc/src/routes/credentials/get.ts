import { getCredentialRoute } from "@agentplane/contracts";
import { getCredential } from "../../services/credentials.ts";
import { projectScope, type RouteDeps } from "../scope.ts";

/** One credential's metadata (project admins); never a secret field. */
export function registerGetCredential({ app, ctx }: RouteDeps): void {
  app.openapi(getCredentialRoute, async (c) => {
    const { projectId, credentialId } = c.req.valid("param");
    return c.json(
      await getCredential(ctx, await projectScope(c, ctx, "credentials:manage", projectId), credentialId),
      200,
    );
  });
}
