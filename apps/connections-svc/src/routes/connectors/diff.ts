import { getPendingSpecDiffRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { diffPendingSpec } from "../../connectors/services/specs.ts";
import type { ConnectionsRouteContext } from "../context.ts";
import { connectorActor } from "./helpers.ts";

export function registerGetPendingSpecDiff(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(getPendingSpecDiffRoute, async (c) => {
    const { connectorId, specId } = c.req.valid("param");
    const { row } = await connectorActor(c, ctx, "connections:read", connectorId);
    return c.json(await diffPendingSpec(ctx, ctx.connectors, row, specId), 200);
  });
}
