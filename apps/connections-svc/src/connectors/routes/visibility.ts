import { setEntryVisibilityRoute } from "@agentplane/contracts";
import { notFound } from "@agentplane/problem-details";
import { checkTeamsOfOrg } from "../services/teams.ts";
import { setEntryVisibility } from "../services/visibility.ts";
import { type ConnectorRouteDeps, connectorActor } from "./helpers.ts";

export function registerSetConnectorEntryVisibility(deps: ConnectorRouteDeps): void {
  deps.app.openapi(setEntryVisibilityRoute, async (c) => {
    const { connectorId, entryName } = c.req.valid("param");
    const body = c.req.valid("json");
    const { row, actor } = await connectorActor(c, deps, "connections:manage", connectorId);
    if (!(await deps.runtime.tools(deps.ctx.db, row)).byName.has(entryName))
      throw notFound(`Tool ${entryName} of connector`, row.id);
    await checkTeamsOfOrg(deps.tenancy, row.org_id, body.teams ?? []);
    return c.json(await setEntryVisibility(deps.ctx, deps.runtime, actor, row, entryName, body), 200);
  });
}
