import { getPendingSpecDiffRoute } from "@agentplane/contracts";
import { notFound } from "@agentplane/problem-details";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { diffPendingSpec } from "../../connectors/services/specs.ts";
import { getConnectorRow } from "../../connectors/services/store.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerGetPendingSpecDiff(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(getPendingSpecDiffRoute, async (c) => {
    const { connectorId, specId } = c.req.valid("param");
    const row = await getConnectorRow(ctx.db, connectorId);
    await authorize(
      c,
      ctx.authorizer,
      "connections:read",
      { projectId: row.project_id },
      { notFound: () => notFound("Connector", connectorId) },
    );
    return c.json(await diffPendingSpec(ctx, ctx.connectors, row, specId), 200);
  });
}
