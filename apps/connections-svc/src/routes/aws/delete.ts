import { deleteAwsConnectionRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import * as aws from "../../services/aws-connections.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerDeleteAwsConnection(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(deleteAwsConnectionRoute, async (c) => {
    const connectionId = c.req.valid("param").connectionId;
    const connection = await aws.findAwsConnection(ctx, connectionId);
    const caller = await authorize(c, ctx.authorizer, "connections:manage", aws.awsConnectionScope(connection));
    await aws.deleteAwsConnection(ctx, caller, { connection });
    return c.body(null, 204);
  });
}
