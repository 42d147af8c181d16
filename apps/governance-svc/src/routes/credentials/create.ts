import { createCredentialRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { createCredential } from "../../services/credentials.ts";
import { callerOf, projectScope } from "../scope.ts";

/** Stores a credential sealed (project admins); the answer carries metadata, never a secret field. */
export function registerCreateCredential(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(createCredentialRoute, async (c) => {
    const scope = await projectScope(c, ctx, "credentials:manage", c.req.valid("param").projectId);
    return c.json(await createCredential(ctx, callerOf(c), scope, c.req.valid("json")), 201);
  });
}
