import { previewConnectorDiscoveryRoute, redactUrlCredentials } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { discoverSource } from "../../connectors/services/discovery.ts";
import type { ConnectionsRouteContext } from "../context.ts";

/** Discovery without saving anything: the tools a description or MCP server would give. */
export function registerPreviewConnectorDiscovery(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(previewConnectorDiscoveryRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const body = c.req.valid("json");
    await authorize(c, ctx.authorizer, "connections:manage", { projectId });
    const discovered = await discoverSource(
      ctx.connectors,
      body.url
        ? { kind: "mcp", url: body.url, headers: {} }
        : { kind: "http", specUrl: body.specUrl, spec: body.spec, include: body.include, exclude: body.exclude },
    );
    return c.json(
      {
        kind: body.url ? ("mcp" as const) : ("http" as const),
        ...(discovered.title ? { title: discovered.title } : {}),
        ...(discovered.baseUrl ? { baseUrl: redactUrlCredentials(discovered.baseUrl) } : {}),
        tools: discovered.tools.map(({ operation: _operation, ...tool }) => tool),
        warnings: discovered.warnings,
      },
      200,
    );
  });
}
