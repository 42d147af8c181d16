import {
  createAwsConnection,
  deleteAwsConnection,
  getAwsConnection,
  listAwsConnections,
  updateAwsConnection,
} from "@agentplane/contracts";
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

export function registerListAwsConnections(app: ServiceApp, ctx: ConnectionsContext): void {
  app.openapi(listAwsConnections, async (c) => {
    const { projectId } = c.req.valid("param");
    await authorize(c, ctx.authorizer, "connections:read", { projectId });
    return c.json(await aws.listAwsConnections(ctx, projectId, c.req.valid("query")), 200);
  });
}

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
