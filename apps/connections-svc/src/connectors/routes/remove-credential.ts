import { removeConnectorCredentialRoute } from "@agentplane/contracts";
import { connectorInProject, setConnectorCredential } from "../services/connectors.ts";
import { type ConnectorRouteDeps, projectActor } from "./helpers.ts";

export function registerRemoveConnectorCredential(deps: ConnectorRouteDeps): void {
  deps.app.openapi(removeConnectorCredentialRoute, async (c) => {
    const { projectId, serverId } = c.req.valid("param");
    const { actor } = await projectActor(c, deps, "connections:manage", projectId);
    const row = await connectorInProject(deps.ctx, projectId, serverId);
    await setConnectorCredential(deps.ctx, deps.runtime, actor, row, null);
    return c.body(null, 204);
  });
}
