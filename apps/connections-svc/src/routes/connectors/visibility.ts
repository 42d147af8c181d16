import { setConnectorEntryVisibilityRoute } from "@agentplane/contracts";
import { notFound } from "@agentplane/problem-details";
import type { ServiceApp } from "@agentplane/service-kit";
import { checkTeamsOfOrg } from "../../connectors/services/teams.ts";
import { setEntryVisibility } from "../../connectors/services/visibility.ts";
import type { ConnectionsRouteContext } from "../context.ts";
import { connectorActor } from "./helpers.ts";

export function registerSetConnectorEntryVisibility(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(setConnectorEntryVisibilityRoute, async (c) => {
    const { connectorId, entryName } = c.req.valid("param");
    const body = c.req.valid("json");
    const { row, actor } = await connectorActor(c, ctx, "connections:manage", connectorId);
    if (!(await ctx.connectors.tools(ctx.db, row)).byName.has(entryName))
      throw notFound(`Tool ${entryName} of connector`, row.id);
    await checkTeamsOfOrg(ctx.tenancy, row.org_id, body.teams ?? []);
    return c.json(await setEntryVisibility(ctx, ctx.connectors, actor, row, entryName, body), 200);
  });
}
