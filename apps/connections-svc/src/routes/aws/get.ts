import { getAwsConnectionRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import * as aws from "../../services/aws-connections.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerGetAwsConnection(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(getAwsConnectionRoute, async (c) => {
    const connectionId = c.req.valid("param").connectionId;
    const connection = await aws.findAwsConnection(ctx, connectionId);
    const _caller = await authorize(c, ctx.authorizer, "connections:read", aws.awsConnectionScope(connection));
    return c.json(aws.serializeAwsConnection(connection), 200);
  });
}
