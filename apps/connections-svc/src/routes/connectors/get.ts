import { getConnectorRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { toConnector } from "../../connectors/services/store.ts";
import type { ConnectionsRouteContext } from "../context.ts";
import { connectorActor } from "./helpers.ts";

export function registerGetConnector(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(getConnectorRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const { row } = await connectorActor(c, ctx, "connections:read", serverId);
    return c.json(toConnector(row), 200);
  });
}
