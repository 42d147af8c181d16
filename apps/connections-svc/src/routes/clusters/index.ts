import type { ServiceApp, UpgradeHandler } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import { TunnelHub } from "../../tunnel/hub.ts";
import { registerCreateCluster } from "./create.ts";
import { registerDeleteCluster } from "./delete.ts";
import { registerForwardToTunnel } from "./forward-to-tunnel.ts";
import { registerGetCluster } from "./get.ts";
import { registerListClusters } from "./list.ts";
import { registerClusterProxy } from "./proxy.ts";
import { registerResolveTunnelToken } from "./resolve-tunnel-token.ts";
import { registerRotateClusterTunnelToken } from "./rotate-tunnel-token.ts";
import { registerUpdateCluster } from "./update.ts";

export interface ClusterArea {
  hub: TunnelHub;
  /** The tunnel endpoint (WebSocket upgrade from a relay, `/v1/clusters/{clusterId}/tunnel`). */
  handleUpgrade: UpgradeHandler;
  close(): Promise<void>;
}

/** Clusters: CRUD, tunnel token rotation, the relay tunnel and the Kubernetes proxy. */
export function registerClusterRoutes(app: ServiceApp, ctx: ConnectionsContext): ClusterArea {
  const hub = new TunnelHub(ctx);
  registerCreateCluster(app, ctx);
  registerListClusters(app, ctx);
  registerGetCluster(app, ctx);
  registerUpdateCluster(app, ctx);
  registerDeleteCluster(app, ctx, hub);
  registerRotateClusterTunnelToken(app, ctx, hub);
  registerClusterProxy(app, ctx, hub);
  registerResolveTunnelToken(app, ctx);
  registerForwardToTunnel(app, hub);
  return { hub, handleUpgrade: hub.handleUpgrade, close: () => hub.close() };
}
