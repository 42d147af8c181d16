import { createClusterRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import * as clusters from "../../services/clusters.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerCreateCluster(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(createClusterRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "connections:manage", { projectId });
    const created = await clusters.createCluster(ctx, caller, c.req.valid("json"));
    return c.json({ ...created.cluster, tunnelToken: created.tunnelToken }, 201);
  });
}
