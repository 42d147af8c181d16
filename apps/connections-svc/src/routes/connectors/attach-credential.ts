import { attachConnectorCredentialRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { connectorInProject, setConnectorCredential } from "../../connectors/services/connectors.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerAttachConnectorCredential(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(attachConnectorCredentialRoute, async (c) => {
    const { projectId, serverId } = c.req.valid("param");
    const { credentialId } = c.req.valid("json");
    const caller = await authorize(c, ctx.authorizer, "connections:manage", { projectId });
    const row = await connectorInProject(ctx, projectId, serverId);
    return c.json(await setConnectorCredential(ctx, caller, { connector: row, credentialId }), 200);
  });
}
