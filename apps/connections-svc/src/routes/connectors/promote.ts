import { promotePendingSpecRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { promotePendingSpec } from "../../connectors/services/specs.ts";
import type { ConnectionsRouteContext } from "../context.ts";
import { connectorActor } from "./helpers.ts";

export function registerPromotePendingSpec(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(promotePendingSpecRoute, async (c) => {
    const { connectorId, specId } = c.req.valid("param");
    const { row, actor } = await connectorActor(c, ctx, "connections:manage", connectorId);
    return c.json(await promotePendingSpec(ctx, ctx.connectors, actor, row.id, specId), 200);
  });
}
