import { createClusterRoute } from "@agentplane/contracts";
import { authorize, requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import * as clusters from "../../services/clusters.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerCreateCluster(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(createClusterRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const decision = await authorize(c, ctx.authorizer, "connections:manage", { projectId });
    const created = await clusters.createCluster({
      ctx,
      principal: requirePrincipal(c),
      orgId: decision.orgId!,
      projectId,
      input: c.req.valid("json"),
      requestId: c.get("requestId"),
    });
    return c.json({ ...created.cluster, tunnelToken: created.tunnelToken }, 201);
  });
}
