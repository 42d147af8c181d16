import type { ServiceApp, UpgradeHandler } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";

export interface ClusterArea {
  /** The tunnel endpoint (WebSocket upgrade from a relay). */
  handleUpgrade: UpgradeHandler;
  close(): Promise<void>;
}

/** Clusters: CRUD, tunnel token rotation, the relay tunnel and the Kubernetes proxy. */
export function registerClusterRoutes(_app: ServiceApp, _ctx: ConnectionsContext): ClusterArea {
  return {
    handleUpgrade: (_req, socket) => socket.destroy(),
    close: async () => {},
  };
}
