import { listPendingSpecsRoute } from "@agentplane/contracts";
import { notFound } from "@agentplane/problem-details";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { listPendingSpecs } from "../../connectors/services/specs.ts";
import { getConnectorRow } from "../../connectors/services/store.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerListPendingSpecs(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(listPendingSpecsRoute, async (c) => {
    const { connectorId } = c.req.valid("param");
    const row = await getConnectorRow(ctx.db, connectorId);
    await authorize(
      c,
      ctx.authorizer,
      "connections:read",
      { projectId: row.project_id },
      { notFound: () => notFound("Connector", connectorId) },
    );
    return c.json(await listPendingSpecs(ctx, row.id), 200);
  });
}
