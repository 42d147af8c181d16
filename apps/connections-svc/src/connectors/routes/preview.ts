import { previewDiscoveryRoute } from "@agentplane/contracts";
import { discoverSource } from "../services/discovery.ts";
import { type ConnectorRouteDeps, projectActor } from "./helpers.ts";

/** Discovery without saving anything: the tools a description or MCP server would give. */
export function registerPreviewConnectorDiscovery(deps: ConnectorRouteDeps): void {
  deps.app.openapi(previewDiscoveryRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const body = c.req.valid("json");
    await projectActor(c, deps, "connections:manage", projectId);
    const discovered = await discoverSource(
      deps.runtime,
      body.url
        ? { kind: "mcp", url: body.url, headers: {} }
        : { kind: "http", specUrl: body.specUrl, spec: body.spec, include: body.include, exclude: body.exclude },
    );
    return c.json(
      {
        kind: body.url ? ("mcp" as const) : ("http" as const),
        ...(discovered.title ? { title: discovered.title } : {}),
        ...(discovered.baseUrl ? { baseUrl: discovered.baseUrl } : {}),
        tools: discovered.tools.map(({ operation: _operation, ...tool }) => tool),
        warnings: discovered.warnings,
      },
      200,
    );
  });
}
