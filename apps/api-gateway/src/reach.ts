import type { Principal } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";

/**
 * What a relay's cluster JWT may call: its own identity, its own cluster and its project's keys,
 * which is all a relay needs. The relay runs on the customer's infrastructure and is not trusted
 * with the rest of its project (other clusters, sandboxes, connectors), nor with a cluster deleted
 * or another one.
 */
const CLUSTER_OPERATIONS: Record<string, (params: Record<string, string>, principal: Principal) => boolean> = {
  getMe: () => true,
  getCluster: (params, principal) => params.clusterId === principal.id,
  getProjectJwks: (params, principal) => params.projectId === principal.projectId,
  // The tunnel token's identity names the token, not its cluster: connections checks that the
  // tunnel opened is that token's cluster's.
  openClusterTunnel: () => true,
};

/** What a route's entry says of who may reach it, read by requests and WebSocket upgrades alike. */
interface RouteReach {
  operationId: string;
  access: string;
  tokenScope?: string | undefined;
}

/**
 * Why the principal may not use the route at all, before its service is asked; undefined when it
 * may. A relay's cluster identity reaches only CLUSTER_OPERATIONS. A scoped API token reaches only
 * the routes of the permissions it names (`authenticated` routes included: a token for model calls
 * does not read the account either, unless the route names the permission that governs it, as
 * listing one's personal tokens names `api-tokens:manage`). Plain requests and WebSocket upgrades
 * are refused alike.
 */
export function reachRefusal(
  principal: Principal | undefined,
  entry: RouteReach,
  params: Record<string, string>,
): ProblemError | undefined {
  if (principal?.type === "cluster" && !CLUSTER_OPERATIONS[entry.operationId]?.(params, principal)) {
    return new ProblemError("forbidden", {
      detail: "A cluster's relay may read only its own cluster, its identity and its project's keys",
    });
  }
  if (!principal?.scopes) return undefined;
  const needed = entry.access === "authenticated" ? entry.tokenScope : entry.access;
  if (needed && principal.scopes.includes(needed)) return undefined;
  return new ProblemError("forbidden", {
    detail: `This token is restricted to ${principal.scopes.join(", ")}; this route needs ${needed ?? "an unrestricted token"}`,
  });
}
