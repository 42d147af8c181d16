import {
  createCredentialRoute,
  deleteCredentialRoute,
  getCredentialRoute,
  listCredentialsRoute,
  updateCredentialRoute,
} from "@agentplane/contracts";
import {
  createCredential,
  deleteCredential,
  getCredential,
  listCredentials,
  updateCredential,
} from "../../services/credentials.ts";
import { callerOf, projectScope, type RouteDeps } from "../scope.ts";

/** Credentials: project admins only; reads return metadata, never a secret field. */
export function registerCredentialRoutes({ app, ctx }: RouteDeps): void {
  app.openapi(listCredentialsRoute, async (c) => {
    const scope = await projectScope(c, ctx, "credentials:manage", c.req.valid("param").projectId);
    return c.json(await listCredentials(ctx, scope, c.req.valid("query")), 200);
  });
  app.openapi(createCredentialRoute, async (c) => {
    const scope = await projectScope(c, ctx, "credentials:manage", c.req.valid("param").projectId);
    return c.json(await createCredential(ctx, callerOf(c), scope, c.req.valid("json")), 201);
  });
  app.openapi(getCredentialRoute, async (c) => {
    const { projectId, credentialId } = c.req.valid("param");
    return c.json(
      await getCredential(ctx, await projectScope(c, ctx, "credentials:manage", projectId), credentialId),
      200,
    );
  });
  app.openapi(updateCredentialRoute, async (c) => {
    const { projectId, credentialId } = c.req.valid("param");
    const scope = await projectScope(c, ctx, "credentials:manage", projectId);
    return c.json(await updateCredential(ctx, callerOf(c), scope, credentialId, c.req.valid("json")), 200);
  });
  app.openapi(deleteCredentialRoute, async (c) => {
    const { projectId, credentialId } = c.req.valid("param");
    await deleteCredential(ctx, callerOf(c), await projectScope(c, ctx, "credentials:manage", projectId), credentialId);
    return c.body(null, 204);
  });
}
