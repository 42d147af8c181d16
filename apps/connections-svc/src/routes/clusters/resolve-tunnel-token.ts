import { internalResolveTunnelTokenRoute } from "@agentplane/contracts";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import { resolveTunnelTokenPrincipal } from "../../services/clusters.ts";
import type { ConnectionsRouteContext } from "../context.ts";

/** Tunnel token resolution for the gateway: the cluster principal a relay's token stands for. */
export function registerInternalResolveTunnelToken(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(internalRoute(internalResolveTunnelTokenRoute), async (c) => {
    const principal = await resolveTunnelTokenPrincipal(ctx, c.req.valid("json").token);
    return c.json({ principal }, 200);
  });
}
