import { setConnectorEntryVisibilityRoute } from "@agentplane/contracts";
import { notFound } from "@agentplane/problem-details";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { connectorScope, getConnectorRow } from "../../connectors/services/store.ts";
import { checkTeamsOfOrg } from "../../connectors/services/teams.ts";
import { setEntryVisibility } from "../../connectors/services/visibility.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function registerSetConnectorEntryVisibility(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(setConnectorEntryVisibilityRoute, async (c) => {
    const { connectorId, entryName } = c.req.valid("param");
    const body = c.req.valid("json");
    const row = await getConnectorRow(ctx.db, connectorId);
    const caller = await authorize(c, ctx.authorizer, "connections:manage", connectorScope(row));
    if (!(await ctx.connectors.tools(ctx.db, row)).byName.has(entryName))
      throw notFound(`Tool ${entryName} of connector`, row.id);
    await checkTeamsOfOrg(ctx.tenancy, row.org_id, body.teams ?? []);
    return c.json(await setEntryVisibility(ctx, ctx.connectors, caller, row, entryName, body), 200);
  });
}
