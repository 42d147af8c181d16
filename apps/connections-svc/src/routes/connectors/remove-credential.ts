import { removeConnectorCredentialRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { connectorInProject, setConnectorCredential } from "../../connectors/services/connectors.ts";
import type { ConnectionsRouteContext } from "../context.ts";
import { projectActor } from "./helpers.ts";

export function registerRemoveConnectorCredential(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(removeConnectorCredentialRoute, async (c) => {
    const { projectId, serverId } = c.req.valid("param");
    const { actor } = await projectActor(c, ctx, "connections:manage", projectId);
    const row = await connectorInProject(ctx, projectId, serverId);
    await setConnectorCredential(ctx, ctx.connectors, actor, row, null);
    return c.body(null, 204);
  });
}
