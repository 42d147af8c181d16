import { listAwsConnections } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import * as aws from "../../services/aws-connections.ts";

export function registerListAwsConnections(app: ServiceApp, ctx: ConnectionsContext): void {
  app.openapi(listAwsConnections, async (c) => {
    const { projectId } = c.req.valid("param");
    await authorize(c, ctx.authorizer, "connections:read", { projectId });
    return c.json(await aws.listAwsConnections(ctx, projectId, c.req.valid("query")), 200);
  });
}
