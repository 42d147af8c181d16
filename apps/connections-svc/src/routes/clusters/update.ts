import { updateClusterRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import * as clusters from "../../services/clusters.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerUpdateCluster(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(updateClusterRoute, async (c) => {
    const clusterId = c.req.valid("param").clusterId;
    const cluster = await clusters.findCluster(ctx, clusterId);
    const caller = await authorize(c, ctx.authorizer, "connections:manage", clusters.clusterScope(cluster));
    const updated = await clusters.updateCluster(ctx, caller, { cluster, ...c.req.valid("json") });
    return c.json(updated, 200);
  });
}
