import { createCredentialRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { createCredential } from "../../services/credentials.ts";

/** Stores a credential sealed (project admins); the answer carries metadata, never a secret field. */
export function registerCreateCredential(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(createCredentialRoute, async (c) => {
    const caller = await authorize(c, ctx.authorizer, "credentials:manage", {
      projectId: c.req.valid("param").projectId,
    });
    return c.json(await createCredential(ctx, caller, c.req.valid("json")), 201);
  });
}
