import { getCredentialRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { getCredential } from "../../services/credentials.ts";

/** One credential's metadata (project admins); never a secret field. */
export function registerGetCredential(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getCredentialRoute, async (c) => {
    const { projectId, credentialId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "credentials:manage", { projectId });
    return c.json(await getCredential(ctx, caller, { credentialId }), 200);
  });
}
