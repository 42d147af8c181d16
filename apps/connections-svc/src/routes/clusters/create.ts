import { createCluster } from "@agentplane/contracts";
import { authorize, requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import * as clusters from "../../services/clusters.ts";

export function registerCreateCluster(app: ServiceApp, ctx: ConnectionsContext): void {
  app.openapi(createCluster, async (c) => {
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
