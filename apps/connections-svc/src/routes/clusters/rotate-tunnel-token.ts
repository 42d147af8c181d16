import { rotateClusterTunnelTokenRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import * as clusters from "../../services/clusters.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerRotateClusterTunnelToken(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(rotateClusterTunnelTokenRoute, async (c) => {
    const { cluster, principal } = await clusters.authorizeCluster(
      c,
      ctx,
      c.req.valid("param").clusterId,
      "connections:manage",
    );
    const rotated = await clusters.rotateTunnelToken({ ctx, principal, cluster, requestId: c.get("requestId") });
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
