import { getClusterRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { authorizeCluster, serializeCluster } from "../../services/clusters.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerGetCluster(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(getClusterRoute, async (c) => {
    const { cluster } = await authorizeCluster(c, ctx, c.req.valid("param").clusterId, "connections:read");
    return c.json(serializeCluster(cluster), 200);
  });
}
