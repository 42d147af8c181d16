import { deleteConnectorRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { deleteConnector } from "../../connectors/services/connectors.ts";
import { connectorScope, getConnectorRow } from "../../connectors/services/store.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerDeleteConnector(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(deleteConnectorRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const row = await getConnectorRow(ctx.db, serverId);
    const caller = await authorize(c, ctx.authorizer, "connections:manage", connectorScope(row));
    await deleteConnector(ctx, caller, { connector: row });
    return c.body(null, 204);
  });
}
