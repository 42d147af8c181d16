import { promotePendingSpecRoute } from "@agentplane/contracts";
import { promotePendingSpec } from "../services/specs.ts";
import { type ConnectorRouteDeps, connectorActor } from "./helpers.ts";

export function registerPromotePendingSpec(deps: ConnectorRouteDeps): void {
  deps.app.openapi(promotePendingSpecRoute, async (c) => {
    const { connectorId, specId } = c.req.valid("param");
    const { row, actor } = await connectorActor(c, deps, "connections:manage", connectorId);
    return c.json(await promotePendingSpec(deps.ctx, deps.runtime, actor, row.id, specId), 200);
  });
}
