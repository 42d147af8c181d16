import { listPendingSpecsRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { listPendingSpecs } from "../../connectors/services/specs.ts";
import type { ConnectionsRouteContext } from "../context.ts";
import { connectorActor } from "./helpers.ts";

export function registerListPendingSpecs(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(listPendingSpecsRoute, async (c) => {
    const { connectorId } = c.req.valid("param");
    const { row } = await connectorActor(c, ctx, "connections:read", connectorId);
    return c.json(await listPendingSpecs(ctx, row.id), 200);
  });
}
