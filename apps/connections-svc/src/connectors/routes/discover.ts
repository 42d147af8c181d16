import { discoverConnectorRoute } from "@agentplane/contracts";
import { discoverAgain } from "../services/specs.ts";
import { type ConnectorRouteDeps, connectorActor } from "./helpers.ts";

export function registerDiscoverConnector(deps: ConnectorRouteDeps): void {
  deps.app.openapi(discoverConnectorRoute, async (c) => {
    const { connectorId } = c.req.valid("param");
    const { row, actor } = await connectorActor(c, deps, "connections:manage", connectorId);
    return c.json(await discoverAgain(deps.ctx, deps.runtime, row, actor), 200);
  });
}
