import { discoverConnectorRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { discoverAgain } from "../../connectors/services/specs.ts";
import { connectorScope, getConnectorRow } from "../../connectors/services/store.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerDiscoverConnector(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(discoverConnectorRoute, async (c) => {
    const { connectorId } = c.req.valid("param");
    const row = await getConnectorRow(ctx.db, connectorId);
    const caller = await authorize(c, ctx.authorizer, "connections:manage", connectorScope(row));
    return c.json(await discoverAgain(ctx, ctx.connectors, row, caller), 200);
  });
}
