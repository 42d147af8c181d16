import { createAwsConnection } from "@agentplane/contracts";
import { authorize, requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import * as aws from "../../services/aws-connections.ts";

export function registerCreateAwsConnection(app: ServiceApp, ctx: ConnectionsContext): void {
  app.openapi(createAwsConnection, async (c) => {
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
