import { getClusterRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { clusterScope, findCluster, serializeCluster } from "../../services/clusters.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerGetCluster(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(getClusterRoute, async (c) => {
    const clusterId = c.req.valid("param").clusterId;
    const cluster = await findCluster(ctx, clusterId);
    const _caller = await authorize(c, ctx.authorizer, "connections:read", clusterScope(cluster));
    return c.json(serializeCluster(cluster), 200);
  });
}
