import { getAwsConnectionRoute } from "@agentplane/contracts";
import { notFound } from "@agentplane/problem-details";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import * as aws from "../../services/aws-connections.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerGetAwsConnection(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(getAwsConnectionRoute, async (c) => {
    const connectionId = c.req.valid("param").connectionId;
    const connection = await aws.findAwsConnection(ctx, connectionId);
    const _caller = await authorize(
      c,
      ctx.authorizer,
      "connections:read",
      { projectId: connection.project_id },
      { notFound: () => notFound("AWS connection", connectionId) },
    );
    return c.json(aws.serializeAwsConnection(connection), 200);
  });
}
