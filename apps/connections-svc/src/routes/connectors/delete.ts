import { deleteConnectorRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { deleteConnector } from "../../connectors/services/connectors.ts";
import type { ConnectionsRouteContext } from "../context.ts";
import { connectorActor } from "./helpers.ts";

export function registerDeleteConnector(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(deleteConnectorRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const { row, actor } = await connectorActor(c, ctx, "connections:manage", serverId);
    await deleteConnector(ctx, ctx.connectors, actor, row);
    return c.body(null, 204);
  });
}
