import { promotePendingSpecRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { promotePendingSpec } from "../../connectors/services/specs.ts";
import { connectorScope, getConnectorRow } from "../../connectors/services/store.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerPromotePendingSpec(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(promotePendingSpecRoute, async (c) => {
    const { connectorId, specId } = c.req.valid("param");
    const row = await getConnectorRow(ctx.db, connectorId);
    const caller = await authorize(c, ctx.authorizer, "connections:manage", connectorScope(row));
    return c.json(await promotePendingSpec(ctx, ctx.connectors, caller, row.id, specId), 200);
  });
}
