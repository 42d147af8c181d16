import { listConnectorToolsRoute } from "@agentplane/contracts";
import { rowStamp } from "../services/hot-index.ts";
import { isVisibleTo, viewerKey } from "../services/visibility.ts";
import { type ConnectorRouteDeps, connectorActor, toolViewer } from "./helpers.ts";

/**
 * Managers see every tool with its visibility; others only the tools visible to them (teams
 * included). The serialized body is kept per tool set, settings version and viewer class, so a
 * 500-tool list is built and stringified once rather than per request.
 */
export function registerListConnectorTools(deps: ConnectorRouteDeps): void {
  deps.app.openapi(listConnectorToolsRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const { row, authz } = await connectorActor(c, deps, "connections:read", serverId, { hot: true });
    const viewer = toolViewer(authz);
    const loaded = await deps.runtime.tools(deps.ctx.db, row);
    const settings = await deps.runtime.index.entrySettings(deps.ctx.db, [row]);
    const { body } = deps.runtime.view(loaded, `rest:${rowStamp(row)}:${viewerKey(viewer)}`, () => {
      const items = loaded.tools
        .filter((t) => viewer.projectAdmin || isVisibleTo(settings.get(`${row.id}/${t.name}`), viewer))
        .map((t) => {
          const setting = settings.get(`${row.id}/${t.name}`);
          return {
            name: t.name,
            description: t.description,
            inputSchema: t.inputSchema,
            ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
            visibility: setting?.visibility ?? ("visible" as const),
            ...(setting?.teams ? { teams: setting.teams } : {}),
          };
        });
      return { body: JSON.stringify({ items }) };
    });
    return c.body(body, 200, { "content-type": "application/json" }) as never;
  });
}
