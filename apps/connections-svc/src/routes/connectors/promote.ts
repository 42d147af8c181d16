import { promotePendingSpecRoute } from "@agentplane/contracts";
import { notFound } from "@agentplane/problem-details";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { promotePendingSpec } from "../../connectors/services/specs.ts";
import { getConnectorRow } from "../../connectors/services/store.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerPromotePendingSpec(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(promotePendingSpecRoute, async (c) => {
    const { connectorId, specId } = c.req.valid("param");
    const row = await getConnectorRow(ctx.db, connectorId);
    const caller = await authorize(
      c,
      ctx.authorizer,
      "connections:manage",
      { projectId: row.project_id },
      { notFound: () => notFound("Connector", connectorId) },
    );
    return c.json(await promotePendingSpec(ctx, ctx.connectors, caller, row.id, specId), 200);
  });
}
