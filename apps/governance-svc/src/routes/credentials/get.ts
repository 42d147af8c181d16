import { getCredentialRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getCredential } from "../../services/credentials.ts";
import { projectScope } from "../scope.ts";

/** One credential's metadata (project admins); never a secret field. */
export function registerGetCredential(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getCredentialRoute, async (c) => {
    const { projectId, credentialId } = c.req.valid("param");
    return c.json(
      await getCredential(ctx, await projectScope(c, ctx, "credentials:manage", projectId), credentialId),
      200,
    );
  });
}
