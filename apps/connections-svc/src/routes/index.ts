import type { ServiceApp } from "@agentplane/service-kit";
import { registerCreateAwsConnection } from "./aws/create.ts";
import { registerDeleteAwsConnection } from "./aws/delete.ts";
import { registerGetAwsConnection } from "./aws/get.ts";
import { registerListAwsConnections } from "./aws/list.ts";
import { registerAwsProxy } from "./aws/proxy.ts";
import { registerTestAwsConnection } from "./aws/test.ts";
import { registerUpdateAwsConnection } from "./aws/update.ts";
import { registerCreateCluster } from "./clusters/create.ts";
import { registerDeleteCluster } from "./clusters/delete.ts";
import { registerForwardToTunnel } from "./clusters/forward-to-tunnel.ts";
import { registerGetCluster } from "./clusters/get.ts";
import { registerListClusters } from "./clusters/list.ts";
import { registerClusterProxy } from "./clusters/proxy.ts";
import { registerInternalResolveTunnelToken } from "./clusters/resolve-tunnel-token.ts";
import { registerRotateClusterTunnelToken } from "./clusters/rotate-tunnel-token.ts";
import { registerUpdateCluster } from "./clusters/update.ts";
import { registerAttachConnectorCredential } from "./connectors/attach-credential.ts";
import { registerCallConnectorTool } from "./connectors/call.ts";
import { registerCreateHttpConnector } from "./connectors/create-http.ts";
import { registerCreateMcpConnector } from "./connectors/create-mcp.ts";
import { registerDeleteConnector } from "./connectors/delete.ts";
import { registerGetPendingSpecDiff } from "./connectors/diff.ts";
import { registerDiscoverConnector } from "./connectors/discover.ts";
import { registerGetConnector } from "./connectors/get.ts";
import { registerListConnectors } from "./connectors/list.ts";
import { registerListPendingSpecs } from "./connectors/pending.ts";
import { registerPreviewConnectorDiscovery } from "./connectors/preview.ts";
import { registerPromotePendingSpec } from "./connectors/promote.ts";
import { registerRemoveConnectorCredential } from "./connectors/remove-credential.ts";
import { registerGetConnectorStatus } from "./connectors/status.ts";
import { registerListConnectorTools } from "./connectors/tools.ts";
import { registerUpdateConnector } from "./connectors/update.ts";
import { registerSetConnectorEntryVisibility } from "./connectors/visibility.ts";
import type { ConnectionsRouteContext } from "./context.ts";

const REGISTRATIONS: ((app: ServiceApp, ctx: ConnectionsRouteContext) => void)[] = [
  // Clusters: CRUD, tunnel token rotation, the Kubernetes proxy and forwarding between replicas.
  registerCreateCluster,
  registerListClusters,
  registerGetCluster,
  registerUpdateCluster,
  registerDeleteCluster,
  registerRotateClusterTunnelToken,
  registerClusterProxy,
  registerInternalResolveTunnelToken,
  registerForwardToTunnel,
  // AWS connections: CRUD, the `test` action and the re-signing proxy.
  registerCreateAwsConnection,
  registerListAwsConnections,
  registerGetAwsConnection,
  registerUpdateAwsConnection,
  registerDeleteAwsConnection,
  registerTestAwsConnection,
  registerAwsProxy,
  // Connectors, literal paths before parameterized ones (`…/mcp-servers/http` before `…/{serverId}`).
  registerListConnectors,
  registerCreateMcpConnector,
  registerCreateHttpConnector,
  registerPreviewConnectorDiscovery,
  registerAttachConnectorCredential,
  registerRemoveConnectorCredential,
  registerGetConnector,
  registerUpdateConnector,
  registerDeleteConnector,
  registerGetConnectorStatus,
  registerListConnectorTools,
  registerDiscoverConnector,
  registerListPendingSpecs,
  registerGetPendingSpecDiff,
  registerPromotePendingSpec,
  registerSetConnectorEntryVisibility,
  registerCallConnectorTool,
];

/**
 * Every HTTP operation of connections-svc, one file each. The relay tunnel is a WebSocket upgrade
 * (clusters/open-tunnel.ts); the MCP endpoints are registered beside these in app.ts.
 */
export function registerRoutes(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  for (const register of REGISTRATIONS) register(app, ctx);
}
