import { createAwsConnectionRoute } from "@agentplane/contracts";
import { authorize, requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import * as aws from "../../services/aws-connections.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerCreateAwsConnection(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(createAwsConnectionRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const decision = await authorize(c, ctx.authorizer, "connections:manage", { projectId });
    const created = await aws.createAwsConnection({
      ctx,
      principal: requirePrincipal(c),
      orgId: decision.orgId!,
      projectId,
      input: c.req.valid("json"),
      requestId: c.get("requestId"),
    });
    return c.json(created, 201);
  });
}
