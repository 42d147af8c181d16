import { getConnectorStatusRoute } from "@agentplane/contracts";
import { countPendingSpecs } from "../services/specs.ts";
import { toConnector } from "../services/store.ts";
import { type ConnectorRouteDeps, connectorActor } from "./helpers.ts";

export function registerGetConnectorStatus(deps: ConnectorRouteDeps): void {
  deps.app.openapi(getConnectorStatusRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const { row } = await connectorActor(c, deps, "connections:read", serverId);
    const pendingSpecs = await countPendingSpecs(deps.ctx, row.id);
    const connector = toConnector(row);
    return c.json(
      {
        status: connector.status,
        ...(connector.lastError ? { lastError: connector.lastError } : {}),
        toolCount: connector.toolCount,
        ...(connector.lastDiscoveredAt ? { lastDiscoveredAt: connector.lastDiscoveredAt } : {}),
        version: connector.version,
        pendingSpecs,
      },
      200,
    );
  });
}
