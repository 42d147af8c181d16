import { getConnectorStatusRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { countPendingSpecs } from "../../connectors/services/specs.ts";
import { connectorScope, getConnectorRow, toConnector } from "../../connectors/services/store.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerGetConnectorStatus(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(getConnectorStatusRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const row = await getConnectorRow(ctx.db, serverId);
    await authorize(c, ctx.authorizer, "connections:read", connectorScope(row));
    const pendingSpecs = await countPendingSpecs(ctx, row.id);
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
