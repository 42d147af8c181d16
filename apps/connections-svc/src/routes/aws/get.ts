import { getAwsConnection } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import * as aws from "../../services/aws-connections.ts";

export function registerGetAwsConnection(app: ServiceApp, ctx: ConnectionsContext): void {
  app.openapi(getAwsConnection, async (c) => {
    const { connection } = await aws.authorizeAwsConnection(
      c,
      ctx,
      c.req.valid("param").connectionId,
      "connections:read",
    );
    return c.json(aws.serializeAwsConnection(connection), 200);
  });
}
