import { createCredentialRoute } from "@agentplane/contracts";
import { createCredential } from "../../services/credentials.ts";
import { callerOf, projectScope, type RouteDeps } from "../scope.ts";

/** Stores a credential sealed (project admins); the answer carries metadata, never a secret field. */
export function registerCreateCredential({ app, ctx }: RouteDeps): void {
  app.openapi(createCredentialRoute, async (c) => {
    const scope = await projectScope(c, ctx, "credentials:manage", c.req.valid("param").projectId);
    return c.json(await createCredential(ctx, callerOf(c), scope, c.req.valid("json")), 201);
  });
}
