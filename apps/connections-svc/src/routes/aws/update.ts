import { updateAwsConnectionRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import * as aws from "../../services/aws-connections.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerUpdateAwsConnection(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(updateAwsConnectionRoute, async (c) => {
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
