import { listClusters } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import * as clusters from "../../services/clusters.ts";

export function registerListClusters(app: ServiceApp, ctx: ConnectionsContext): void {
  app.openapi(listClusters, async (c) => {
    const { projectId } = c.req.valid("param");
    await authorize(c, ctx.authorizer, "connections:read", { projectId });
    return c.json(await clusters.listClusters(ctx, projectId, c.req.valid("query")), 200);
  });
}
