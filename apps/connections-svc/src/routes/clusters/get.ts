import { getCluster } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import { authorizeCluster, serializeCluster } from "../../services/clusters.ts";

export function registerGetCluster(app: ServiceApp, ctx: ConnectionsContext): void {
  app.openapi(getCluster, async (c) => {
    const { cluster } = await authorizeCluster(c, ctx, c.req.valid("param").clusterId, "connections:read");
    return c.json(serializeCluster(cluster), 200);
  });
}
