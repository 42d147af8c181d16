import { updateAwsConnectionRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import * as aws from "../../services/aws-connections.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerUpdateAwsConnection(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(updateAwsConnectionRoute, async (c) => {
    const connectionId = c.req.valid("param").connectionId;
    const connection = await aws.findAwsConnection(ctx, connectionId);
    const caller = await authorize(c, ctx.authorizer, "connections:manage", aws.awsConnectionScope(connection));
    const input = c.req.valid("json");
    return c.json(await aws.updateAwsConnection(ctx, caller, { connection, ...input }), 200);
  });
}
