import { discoverConnectorRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { discoverAgain } from "../../connectors/services/specs.ts";
import type { ConnectionsRouteContext } from "../context.ts";
import { connectorActor } from "./helpers.ts";

export function registerDiscoverConnector(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(discoverConnectorRoute, async (c) => {
    const { connectorId } = c.req.valid("param");
    const { row, actor } = await connectorActor(c, ctx, "connections:manage", connectorId);
    return c.json(await discoverAgain(ctx, ctx.connectors, row, actor), 200);
  });
}
