import { rotateClusterTunnelTokenRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import * as clusters from "../../services/clusters.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerRotateClusterTunnelToken(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(rotateClusterTunnelTokenRoute, async (c) => {
    const clusterId = c.req.valid("param").clusterId;
    const cluster = await clusters.findCluster(ctx, clusterId);
    const caller = await authorize(c, ctx.authorizer, "connections:manage", clusters.clusterScope(cluster));
    const rotated = await clusters.rotateTunnelToken(ctx, caller, { cluster });
    const delivered = await ctx.hub.deliverTunnelToken(cluster.id, rotated.token, rotated.previousTokenId);
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
