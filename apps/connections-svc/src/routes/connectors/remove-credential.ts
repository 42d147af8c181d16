import { removeConnectorCredentialRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { connectorInProject, setConnectorCredential } from "../../connectors/services/connectors.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerRemoveConnectorCredential(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(removeConnectorCredentialRoute, async (c) => {
    const { projectId, serverId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "connections:manage", { projectId });
    const row = await connectorInProject(ctx, projectId, serverId);
    await setConnectorCredential(ctx, caller, { connector: row, credentialId: null });
    return c.body(null, 204);
  });
}
