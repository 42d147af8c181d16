import { createAwsConnectionRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import * as aws from "../../services/aws-connections.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerCreateAwsConnection(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(createAwsConnectionRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "connections:manage", { projectId });
    const created = await aws.createAwsConnection(ctx, caller, c.req.valid("json"));
    return c.json(created, 201);
  });
}
