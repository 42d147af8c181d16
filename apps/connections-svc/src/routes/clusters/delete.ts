import { deleteClusterRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import * as clusters from "../../services/clusters.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerDeleteCluster(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(deleteClusterRoute, async (c) => {
    const { cluster, principal } = await clusters.authorizeCluster(
      c,
      ctx,
      c.req.valid("param").clusterId,
      "connections:manage",
    );
    await clusters.deleteCluster({ ctx, principal, cluster, requestId: c.get("requestId") });
    // A tunnel on another replica ends at its next heartbeat, when its registry row is gone.
    await ctx.hub.disconnect(cluster.id);
    return c.body(null, 204);
  });
}
