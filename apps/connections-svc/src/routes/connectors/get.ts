import { getConnectorRoute } from "@agentplane/contracts";
import { notFound } from "@agentplane/problem-details";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { getConnectorRow, toConnector } from "../../connectors/services/store.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerGetConnector(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(getConnectorRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const row = await getConnectorRow(ctx.db, serverId);
    await authorize(
      c,
      ctx.authorizer,
      "connections:read",
      { projectId: row.project_id },
      { notFound: () => notFound("Connector", serverId) },
    );
    return c.json(toConnector(row), 200);
  });
}
