import { createHttpConnectorRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { createConnector } from "../../connectors/services/connectors.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerCreateHttpConnector(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(createHttpConnectorRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const body = c.req.valid("json");
    const caller = await authorize(c, ctx.authorizer, "connections:manage", { projectId });
    const connector = await createConnector(ctx, caller, {
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
