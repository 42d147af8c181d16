import { listClustersRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import * as clusters from "../../services/clusters.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerListClusters(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(listClustersRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "connections:read", { projectId });
    return c.json(await clusters.listClusters(ctx, caller, c.req.valid("query")), 200);
  });
}
