import { createMcpConnectorRoute } from "@agentplane/contracts";
import { createConnector } from "../services/connectors.ts";
import { type ConnectorRouteDeps, projectActor } from "./helpers.ts";

export function registerCreateMcpConnector(deps: ConnectorRouteDeps): void {
  deps.app.openapi(createMcpConnectorRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const body = c.req.valid("json");
    const { actor } = await projectActor(c, deps, "connections:manage", projectId);
    const connector = await createConnector(deps.ctx, deps.runtime, actor, {
      projectId,
      name: body.name,
      credentialId: body.credentialId,
      discoveryIntervalMinutes: body.discoveryIntervalMinutes,
      source: { kind: "mcp", url: body.url, headers: body.headers },
    });
    return c.json(connector, 201);
  });
}
