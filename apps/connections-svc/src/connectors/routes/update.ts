import { updateConnectorRoute } from "@agentplane/contracts";
import { updateConnector } from "../services/connectors.ts";
import { type ConnectorRouteDeps, connectorActor } from "./helpers.ts";

export function registerUpdateConnector(deps: ConnectorRouteDeps): void {
  deps.app.openapi(updateConnectorRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const body = c.req.valid("json");
    const { row, actor } = await connectorActor(c, deps, "connections:manage", serverId);
    return c.json(await updateConnector(deps.ctx, deps.runtime, actor, row, body), 200);
  });
}
