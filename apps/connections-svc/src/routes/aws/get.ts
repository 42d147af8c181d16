import { getAwsConnectionRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import * as aws from "../../services/aws-connections.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerGetAwsConnection(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(getAwsConnectionRoute, async (c) => {
    const { connection } = await aws.authorizeAwsConnection(
      c,
      ctx,
      c.req.valid("param").connectionId,
      "connections:read",
    );
    return c.json(aws.serializeAwsConnection(connection), 200);
  });
}
