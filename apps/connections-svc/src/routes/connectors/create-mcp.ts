import { createMcpConnectorRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { createConnector } from "../../connectors/services/connectors.ts";
import type { ConnectionsRouteContext } from "../context.ts";
import { projectActor } from "./helpers.ts";

export function registerCreateMcpConnector(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(createMcpConnectorRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const body = c.req.valid("json");
    const { actor } = await projectActor(c, ctx, "connections:manage", projectId);
    const connector = await createConnector(ctx, ctx.connectors, actor, {
      projectId,
      name: body.name,
      credentialId: body.credentialId,
      discoveryIntervalMinutes: body.discoveryIntervalMinutes,
      source: { kind: "mcp", url: body.url, headers: body.headers },
    });
    return c.json(connector, 201);
  });
}
