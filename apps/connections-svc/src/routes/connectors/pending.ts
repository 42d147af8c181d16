import { listPendingSpecsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { listPendingSpecs } from "../../connectors/services/specs.ts";
import { connectorScope, getConnectorRow } from "../../connectors/services/store.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerListPendingSpecs(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(listPendingSpecsRoute, async (c) => {
    const { connectorId } = c.req.valid("param");
    const row = await getConnectorRow(ctx.db, connectorId);
    await authorize(c, ctx.authorizer, "connections:read", connectorScope(row));
    return c.json(await listPendingSpecs(ctx, row.id), 200);
  });
}
