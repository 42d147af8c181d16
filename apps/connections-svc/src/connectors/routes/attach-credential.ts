import { attachConnectorCredentialRoute } from "@agentplane/contracts";
import { connectorInProject, setConnectorCredential } from "../services/connectors.ts";
import { type ConnectorRouteDeps, projectActor } from "./helpers.ts";

export function registerAttachConnectorCredential(deps: ConnectorRouteDeps): void {
  deps.app.openapi(attachConnectorCredentialRoute, async (c) => {
    const { projectId, serverId } = c.req.valid("param");
    const { credentialId } = c.req.valid("json");
    const { actor } = await projectActor(c, deps, "connections:manage", projectId);
    const row = await connectorInProject(deps.ctx, projectId, serverId);
    return c.json(await setConnectorCredential(deps.ctx, deps.runtime, actor, row, credentialId), 200);
  });
}
