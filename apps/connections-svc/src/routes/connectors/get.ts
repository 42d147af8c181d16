import { getConnectorRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { connectorScope, getConnectorRow, toConnector } from "../../connectors/services/store.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerGetConnector(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(getConnectorRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const row = await getConnectorRow(ctx.db, serverId);
    await authorize(c, ctx.authorizer, "connections:read", connectorScope(row));
    return c.json(toConnector(row), 200);
  });
}
