import { rotateClusterTunnelTokenRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import * as clusters from "../../services/clusters.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerRotateClusterTunnelToken(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(rotateClusterTunnelTokenRoute, async (c) => {
    const clusterId = c.req.valid("param").clusterId;
    const deliver = c.req.valid("query").deliver !== "false";
    const cluster = await clusters.findCluster(ctx, clusterId);
    const caller = await authorize(c, ctx.authorizer, "connections:manage", clusters.clusterScope(cluster));
    const rotated = await clusters.rotateTunnelToken(ctx, caller, { cluster });
    // Not delivered: whoever holds the tunnel now may hold a leaked token, so it is cut off at once
    // rather than handed the new one (other replicas close theirs when its token no longer renews).
    let delivered = false;
    if (deliver) delivered = await ctx.hub.deliverTunnelToken(cluster.id, rotated.token, rotated.previousTokenId);
    else await ctx.hub.disconnect(cluster.id);
    return c.json(
      {
        clusterId: cluster.id,
        tunnelToken: rotated.token,
        rotatedAt: rotated.rotatedAt.toISOString(),
        deliveredToRelay: delivered,
      },
      200,
    );
  });
}
