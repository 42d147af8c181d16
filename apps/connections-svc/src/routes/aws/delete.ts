import { deleteAwsConnectionRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import * as aws from "../../services/aws-connections.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerDeleteAwsConnection(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(deleteAwsConnectionRoute, async (c) => {
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
