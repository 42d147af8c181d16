import { getConnectorStatusRoute } from "@agentplane/contracts";
import { toConnector } from "../services/store.ts";
import { type ConnectorRouteDeps, connectorActor } from "./helpers.ts";

export function registerGetConnectorStatus(deps: ConnectorRouteDeps): void {
  deps.app.openapi(getConnectorStatusRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const { row } = await connectorActor(c, deps, "connections:read", serverId);
    const pending = await deps.ctx.db
      .selectFrom("connector_pending_specs")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("connector_id", "=", row.id)
      .where("status", "=", "pending")
      .executeTakeFirst();
    const connector = toConnector(row);
    return c.json(
      {
        status: connector.status,
        ...(connector.lastError ? { lastError: connector.lastError } : {}),
        toolCount: connector.toolCount,
        ...(connector.lastDiscoveredAt ? { lastDiscoveredAt: connector.lastDiscoveredAt } : {}),
        version: connector.version,
        pendingSpecs: Number(pending?.n ?? 0),
      },
      200,
    );
  });
}
