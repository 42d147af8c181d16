import type { UpgradeHandler } from "@agentplane/service-kit";
import type { ConnectionsRouteContext } from "../context.ts";

/**
 * `openClusterTunnel` (`/v1/clusters/{clusterId}/tunnel`): a relay's WebSocket upgrade, which does
 * not pass through the HTTP app. The replica's tunnel hub authenticates the tunnel token and holds
 * the tunnel (tunnel/hub.ts `accept`).
 */
export function createTunnelUpgradeHandler(ctx: ConnectionsRouteContext): UpgradeHandler {
  return ctx.hub.handleUpgrade;
}
