import { deleteAwsConnection } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import * as aws from "../../services/aws-connections.ts";

export function registerDeleteAwsConnection(app: ServiceApp, ctx: ConnectionsContext): void {
  app.openapi(deleteAwsConnection, async (c) => {
    const { connection, principal } = await aws.authorizeAwsConnection(
      c,
      ctx,
      c.req.valid("param").connectionId,
      "connections:manage",
    );
    await aws.deleteAwsConnection({ ctx, principal, connection, requestId: c.get("requestId") });
    return c.body(null, 204);
  });
}
