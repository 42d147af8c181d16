import { updateClusterRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import * as clusters from "../../services/clusters.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerUpdateCluster(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(updateClusterRoute, async (c) => {
    const { cluster, principal } = await clusters.authorizeCluster(
      c,
      ctx,
      c.req.valid("param").clusterId,
      "connections:manage",
    );
    const updated = await clusters.updateCluster({
      ctx,
      principal,
      cluster,
      input: c.req.valid("json"),
      requestId: c.get("requestId"),
    });
    return c.json(updated, 200);
  });
}
