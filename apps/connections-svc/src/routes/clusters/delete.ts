import { deleteClusterRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import * as clusters from "../../services/clusters.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerDeleteCluster(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(deleteClusterRoute, async (c) => {
    const clusterId = c.req.valid("param").clusterId;
    const cluster = await clusters.findCluster(ctx, clusterId);
    const caller = await authorize(c, ctx.authorizer, "connections:manage", clusters.clusterScope(cluster));
    await clusters.deleteCluster(ctx, caller, { cluster });
    // A tunnel on another replica ends at its next heartbeat, when its registry row is gone.
    await ctx.hub.disconnect(cluster.id);
    return c.body(null, 204);
  });
}
