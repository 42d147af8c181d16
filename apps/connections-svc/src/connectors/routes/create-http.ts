import { createHttpConnectorRoute } from "@agentplane/contracts";
import { createConnector } from "../services/connectors.ts";
import { type ConnectorRouteDeps, projectActor } from "./helpers.ts";

export function registerCreateHttpConnector(deps: ConnectorRouteDeps): void {
  deps.app.openapi(createHttpConnectorRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const body = c.req.valid("json");
    const { actor } = await projectActor(c, deps, "connections:manage", projectId);
    const connector = await createConnector(deps.ctx, deps.runtime, actor, {
      projectId,
      name: body.name,
      credentialId: body.credentialId,
      discoveryIntervalMinutes: body.discoveryIntervalMinutes,
      source: {
        kind: "http",
        specUrl: body.specUrl,
        spec: body.spec,
        baseUrl: body.baseUrl,
        include: body.include,
        exclude: body.exclude,
      },
    });
    return c.json(connector, 201);
  });
}
