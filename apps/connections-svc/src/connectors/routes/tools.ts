import { listConnectorToolsRoute } from "@agentplane/contracts";
import { entrySettings, isVisibleTo } from "../services/visibility.ts";
import { type ConnectorRouteDeps, connectorActor, isProjectAdmin } from "./helpers.ts";

/** Managers see every tool with its visibility; others only the tools visible to them. */
export function registerListConnectorTools(deps: ConnectorRouteDeps): void {
  deps.app.openapi(listConnectorToolsRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const { row, authz } = await connectorActor(c, deps, "connections:read", serverId);
    const admin = isProjectAdmin(authz);
    const settings = await entrySettings(deps.ctx, [row.id]);
    const items = (await deps.runtime.tools(deps.ctx.db, row)).tools
      .filter((t) => admin || isVisibleTo(settings.get(`${row.id}/${t.name}`), false))
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
    return c.json({ items }, 200);
  });
}
