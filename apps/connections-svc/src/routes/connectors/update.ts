import { updateConnectorRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { updateConnector } from "../../connectors/services/connectors.ts";
import type { ConnectionsRouteContext } from "../context.ts";
import { connectorActor } from "./helpers.ts";

export function registerUpdateConnector(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(updateConnectorRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const body = c.req.valid("json");
    const { row, actor } = await connectorActor(c, ctx, "connections:manage", serverId);
    return c.json(await updateConnector(ctx, ctx.connectors, actor, row, body), 200);
  });
}
