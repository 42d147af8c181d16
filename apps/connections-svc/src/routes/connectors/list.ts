import { listConnectorsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { listConnectors } from "../../connectors/services/connectors.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerListConnectors(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(listConnectorsRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    await authorize(c, ctx.authorizer, "connections:read", { projectId });
    return c.json(await listConnectors(ctx, projectId, limit, cursor), 200);
  });
}
