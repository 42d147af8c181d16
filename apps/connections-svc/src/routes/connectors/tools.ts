import { listConnectorToolsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { rowStamp } from "../../connectors/services/hot-index.ts";
import { connectorScope } from "../../connectors/services/store.ts";
import { isVisibleTo, viewerKey } from "../../connectors/services/visibility.ts";
import type { ConnectionsRouteContext } from "../context.ts";
import { toolViewer } from "./helpers.ts";

/**
 * Managers see every tool with its visibility; others only the tools visible to them (teams
 * included). The serialized body is kept per tool set, settings version and viewer class, so a
 * 500-tool list is built and stringified once rather than per request.
 */
export function registerListConnectorTools(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(listConnectorToolsRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const row = await ctx.connectors.index.row(ctx.db, serverId);
    const caller = await authorize(c, ctx.connectors.authorizer, "connections:read", connectorScope(row));
    const viewer = toolViewer(caller);
    const loaded = await ctx.connectors.tools(ctx.db, row);
    const settings = await ctx.connectors.index.entrySettings(ctx.db, [row]);
    const { body } = ctx.connectors.view(loaded, `rest:${rowStamp(row)}:${viewerKey(viewer)}`, () => {
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
