import { updateConnectorRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { updateConnector } from "../../connectors/services/connectors.ts";
import { connectorScope, getConnectorRow } from "../../connectors/services/store.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerUpdateConnector(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(updateConnectorRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const body = c.req.valid("json");
    const row = await getConnectorRow(ctx.db, serverId);
    const caller = await authorize(c, ctx.authorizer, "connections:manage", connectorScope(row));
    return c.json(await updateConnector(ctx, caller, { ...body, connector: row }), 200);
  });
}
