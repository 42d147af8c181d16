import { getClusterRoute } from "@agentplane/contracts";
import { notFound } from "@agentplane/problem-details";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { findCluster, serializeCluster } from "../../services/clusters.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerGetCluster(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(getClusterRoute, async (c) => {
    const clusterId = c.req.valid("param").clusterId;
    const cluster = await findCluster(ctx, clusterId);
    const _caller = await authorize(
      c,
      ctx.authorizer,
      "connections:read",
      { projectId: cluster.project_id },
      { notFound: () => notFound("Cluster", clusterId) },
    );
    return c.json(serializeCluster(cluster), 200);
  });
}
