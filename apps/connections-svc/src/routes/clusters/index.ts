import type { ServiceApp, UpgradeHandler } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import { TunnelHub } from "../../tunnel/hub.ts";
import { registerCreateCluster } from "./create.ts";
import { registerDeleteCluster } from "./delete.ts";
import { registerGetCluster } from "./get.ts";
import { registerClusterInternalRoutes } from "./internal.ts";
import { registerListClusters } from "./list.ts";
import { registerClusterProxy } from "./proxy.ts";
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
  registerClusterInternalRoutes(app, ctx, hub);
  return { hub, handleUpgrade: hub.handleUpgrade, close: () => hub.close() };
}
