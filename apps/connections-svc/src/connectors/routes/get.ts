import { getConnectorRoute } from "@agentplane/contracts";
import { toConnector } from "../services/store.ts";
import { type ConnectorRouteDeps, connectorActor } from "./helpers.ts";

export function registerGetConnector(deps: ConnectorRouteDeps): void {
  deps.app.openapi(getConnectorRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const { row } = await connectorActor(c, deps, "connections:read", serverId);
    return c.json(toConnector(row), 200);
  });
}
