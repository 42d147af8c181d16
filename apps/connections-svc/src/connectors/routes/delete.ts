import { deleteConnectorRoute } from "@agentplane/contracts";
import { deleteConnector } from "../services/connectors.ts";
import { type ConnectorRouteDeps, connectorActor } from "./helpers.ts";

export function registerDeleteConnector(deps: ConnectorRouteDeps): void {
  deps.app.openapi(deleteConnectorRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const { row, actor } = await connectorActor(c, deps, "connections:manage", serverId);
    await deleteConnector(deps.ctx, deps.runtime, actor, row);
    return c.body(null, 204);
  });
}
