import { updateAwsConnection } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import * as aws from "../../services/aws-connections.ts";

export function registerUpdateAwsConnection(app: ServiceApp, ctx: ConnectionsContext): void {
  app.openapi(updateAwsConnection, async (c) => {
    const { connection, principal } = await aws.authorizeAwsConnection(
      c,
      ctx,
      c.req.valid("param").connectionId,
      "connections:manage",
    );
    const input = c.req.valid("json");
    return c.json(
      await aws.updateAwsConnection({ ctx, principal, connection, input, requestId: c.get("requestId") }),
      200,
    );
  });
}
