import { getPendingSpecDiffRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { diffPendingSpec } from "../../connectors/services/specs.ts";
import { connectorScope, getConnectorRow } from "../../connectors/services/store.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerGetPendingSpecDiff(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(getPendingSpecDiffRoute, async (c) => {
    const { connectorId, specId } = c.req.valid("param");
    const row = await getConnectorRow(ctx.db, connectorId);
    await authorize(c, ctx.authorizer, "connections:read", connectorScope(row));
    return c.json(await diffPendingSpec(ctx, ctx.connectors, row, specId), 200);
  });
}
