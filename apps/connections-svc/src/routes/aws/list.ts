import { listAwsConnectionsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import * as aws from "../../services/aws-connections.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerListAwsConnections(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(listAwsConnectionsRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "connections:read", { projectId });
    return c.json(await aws.listAwsConnections(ctx, caller, c.req.valid("query")), 200);
  });
}
