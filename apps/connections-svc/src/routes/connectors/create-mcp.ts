import { createMcpConnectorRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { createConnector } from "../../connectors/services/connectors.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerCreateMcpConnector(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(createMcpConnectorRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const body = c.req.valid("json");
    const caller = await authorize(c, ctx.authorizer, "connections:manage", { projectId });
    const connector = await createConnector(ctx, caller, {
      projectId,
      name: body.name,
      credentialId: body.credentialId,
      discoveryIntervalMinutes: body.discoveryIntervalMinutes,
      source: { kind: "mcp", url: body.url, headers: body.headers },
    });
    return c.json(connector, 201);
  });
}
