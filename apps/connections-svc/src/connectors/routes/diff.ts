import { getPendingSpecDiffRoute } from "@agentplane/contracts";
import { diffPendingSpec } from "../services/specs.ts";
import { type ConnectorRouteDeps, connectorActor } from "./helpers.ts";

export function registerGetPendingSpecDiff(deps: ConnectorRouteDeps): void {
  deps.app.openapi(getPendingSpecDiffRoute, async (c) => {
    const { connectorId, specId } = c.req.valid("param");
    const { row } = await connectorActor(c, deps, "connections:read", connectorId);
    return c.json(await diffPendingSpec(deps.ctx, deps.runtime, row, specId), 200);
  });
}
