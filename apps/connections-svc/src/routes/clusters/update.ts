import { updateCluster } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import * as clusters from "../../services/clusters.ts";

export function registerUpdateCluster(app: ServiceApp, ctx: ConnectionsContext): void {
  app.openapi(updateCluster, async (c) => {
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
