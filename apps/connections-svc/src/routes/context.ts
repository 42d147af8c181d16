import type { ServiceClient } from "@agentplane/service-kit";
import type { AwsCredentialResolver } from "../aws/credentials.ts";
import type { ConnectorRuntime } from "../connectors/services/runtime.ts";
import type { ConnectionsContext } from "../context.ts";
import type { TunnelHub } from "../tunnel/hub.ts";

/** What every route handler gets: the service context and the live parts of its areas. */
export interface ConnectionsRouteContext extends ConnectionsContext {
  /** The relays' tunnels held by this replica (cluster proxy, token rotation, forwarding). */
  hub: TunnelHub;
  awsCredentials: AwsCredentialResolver;
  connectors: ConnectorRuntime;
  /** tenancy's internal API (team ids of a visibility restriction); absent where none is wired. */
  tenancy: ServiceClient | undefined;
}
