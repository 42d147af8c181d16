import { rotateClusterTunnelToken } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import * as clusters from "../../services/clusters.ts";
import type { TunnelHub } from "../../tunnel/hub.ts";

export function registerRotateClusterTunnelToken(app: ServiceApp, ctx: ConnectionsContext, hub: TunnelHub): void {
  app.openapi(rotateClusterTunnelToken, async (c) => {
    const { cluster, principal } = await clusters.authorizeCluster(
      c,
      ctx,
      c.req.valid("param").clusterId,
      "connections:manage",
    );
    const rotated = await clusters.rotateTunnelToken({ ctx, principal, cluster, requestId: c.get("requestId") });
    const delivered = await hub.deliverTunnelToken(cluster.id, rotated.token, rotated.previousTokenId);
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
