import { discoverConnectorRoute } from "@agentplane/contracts";
import { notFound } from "@agentplane/problem-details";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { discoverAgain } from "../../connectors/services/specs.ts";
import { getConnectorRow } from "../../connectors/services/store.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerDiscoverConnector(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(discoverConnectorRoute, async (c) => {
    const { connectorId } = c.req.valid("param");
    const row = await getConnectorRow(ctx.db, connectorId);
    const caller = await authorize(
      c,
      ctx.authorizer,
      "connections:manage",
      { projectId: row.project_id },
      { notFound: () => notFound("Connector", connectorId) },
    );
    return c.json(await discoverAgain(ctx, ctx.connectors, row, caller), 200);
  });
}
