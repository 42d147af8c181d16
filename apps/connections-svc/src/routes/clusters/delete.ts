import { deleteCluster } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import * as clusters from "../../services/clusters.ts";
import type { TunnelHub } from "../../tunnel/hub.ts";

export function registerDeleteCluster(app: ServiceApp, ctx: ConnectionsContext, hub: TunnelHub): void {
  app.openapi(deleteCluster, async (c) => {
    const { cluster, principal } = await clusters.authorizeCluster(
      c,
      ctx,
      c.req.valid("param").clusterId,
      "connections:manage",
    );
    await clusters.deleteCluster({ ctx, principal, cluster, requestId: c.get("requestId") });
    // A tunnel on another replica ends at its next heartbeat, when its registry row is gone.
    await hub.disconnect(cluster.id);
    return c.body(null, 204);
  });
}
