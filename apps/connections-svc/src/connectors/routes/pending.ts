import { listPendingSpecsRoute } from "@agentplane/contracts";
import { listPendingSpecs } from "../services/specs.ts";
import { type ConnectorRouteDeps, connectorActor } from "./helpers.ts";

export function registerListPendingSpecs(deps: ConnectorRouteDeps): void {
  deps.app.openapi(listPendingSpecsRoute, async (c) => {
    const { connectorId } = c.req.valid("param");
    const { row } = await connectorActor(c, deps, "connections:read", connectorId);
    return c.json(await listPendingSpecs(deps.ctx, row.id), 200);
  });
}
