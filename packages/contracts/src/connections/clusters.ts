import { z } from "@hono/zod-openapi";
import { limitedCreateConflict } from "../common/object-limits.ts";
import { defineRoute } from "../common/route.ts";
import { CursorPage, pathParam, Timestamp } from "../common/schemas.ts";
import { LabelsSchema } from "../sandbox/schemas.ts";
import { jsonBody, jsonRequest, NoContent, PageQuery, ProjectIdParams } from "../tenancy/shared.ts";

/** Tunnel tokens look like `apct_<tokenId>_<secret>`; the gateway sends tokens with this prefix to connections-svc. */
export const TUNNEL_TOKEN_PREFIX = "apct_";

export const CLUSTER_STATUSES = ["pending", "connected", "disconnected"] as const;

export const Cluster = z
  .object({
    id: z.string(),
    orgId: z.string(),
    projectId: z.string(),
    name: z.string(),
    description: z.string().optional(),
    labels: z.record(z.string(), z.string()),
    /** `pending`: never connected; `connected`: a relay holds a tunnel; `disconnected`: it did, no longer. */
    status: z.enum(CLUSTER_STATUSES),
    /** When the current status began (connected or disconnected). */
    statusSince: Timestamp.optional(),
    lastHeartbeatAt: Timestamp.optional(),
    relayVersion: z.string().optional(),
    /** The cluster's Kubernetes version (`gitVersion` of its `/version`). */
    kubernetesVersion: z.string().optional(),
    /** The connections replica that holds the tunnel. */
    replica: z.string().optional(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("Cluster");
export type Cluster = z.infer<typeof Cluster>;

export const CreatedCluster = Cluster.extend({
  /** Shown once: the relay's credential for opening its tunnel. */
  tunnelToken: z.string(),
}).openapi("CreatedCluster");

export const ClusterList = CursorPage(Cluster).openapi("ClusterList");

export const CreateClusterBody = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    description: z.string().max(1000).optional(),
    labels: LabelsSchema.optional(),
  })
  .openapi("CreateCluster");
export const UpdateClusterBody = z
  .strictObject({
    name: z.string().trim().min(1).max(100).optional(),
    description: z.string().max(1000).optional(),
    labels: LabelsSchema.optional(),
  })
  .openapi("UpdateCluster");

export const TunnelTokenRotation = z
  .object({
    clusterId: z.string(),
    /** Shown once; the previous token no longer opens tunnels. */
    tunnelToken: z.string(),
    rotatedAt: Timestamp,
    /** Whether a connected relay was sent the new token over its tunnel. */
    deliveredToRelay: z.boolean(),
  })
  .openapi("TunnelTokenRotation");

export const ClusterIdParams = z.object({ clusterId: pathParam("clusterId", "cl_01jc2x3y4z5a6b7c8d9e0f1g2h") });
export const ClusterProxyParams = ClusterIdParams.extend({
  path: z
    .string()
    .min(1)
    .openapi({ param: { name: "path", in: "path" }, example: "api/v1/namespaces/default/pods" }),
});
const ListClustersQuery = PageQuery.extend({
  status: z
    .enum(CLUSTER_STATUSES)
    .optional()
    .openapi({ param: { name: "status", in: "query" } }),
});

const tags = ["Clusters"];

export const createClusterRoute = defineRoute(
  { service: "connections", access: "connections:manage" },
  {
    operationId: "createCluster",
    method: "post",
    path: "/v1/projects/{projectId}/clusters",
    tags,
    summary: "Register a cluster; the answer carries its tunnel token, shown once",
    description:
      "Registers a Kubernetes cluster. The answer carries the tunnel token (shown once) that its relay uses to dial out to the platform; the cluster stays `pending` until the relay connects.",
    request: { params: ProjectIdParams, ...jsonRequest(CreateClusterBody) },
    responses: { 201: jsonBody(CreatedCluster, "Registered"), ...limitedCreateConflict("clusters") },
  },
);

export const listClustersRoute = defineRoute(
  { service: "connections", access: "connections:read" },
  {
    operationId: "listClusters",
    method: "get",
    path: "/v1/projects/{projectId}/clusters",
    tags,
    summary: "Clusters of a project, optionally by status",
    description: "The project's clusters with their tunnel status, cursor-paged, optionally by status.",
    request: { params: ProjectIdParams, query: ListClustersQuery },
    responses: { 200: jsonBody(ClusterList, "One page of clusters") },
  },
);

export const getClusterRoute = defineRoute(
  { service: "connections", access: "connections:read" },
  {
    operationId: "getCluster",
    method: "get",
    path: "/v1/clusters/{clusterId}",
    tags,
    summary: "A cluster and its tunnel status",
    description:
      "A cluster: status (`pending`, `connected`, `disconnected` with since), last heartbeat, relay and Kubernetes versions, and the platform replica that holds its tunnel.",
    request: { params: ClusterIdParams },
    responses: { 200: jsonBody(Cluster, "The cluster") },
  },
);

export const updateClusterRoute = defineRoute(
  { service: "connections", access: "connections:manage" },
  {
    operationId: "updateCluster",
    method: "patch",
    path: "/v1/clusters/{clusterId}",
    tags,
    summary: "Rename, describe or relabel a cluster",
    description: "Changes a cluster's name, description or labels.",
    request: { params: ClusterIdParams, ...jsonRequest(UpdateClusterBody) },
    responses: { 200: jsonBody(Cluster, "Updated") },
  },
);

export const deleteClusterRoute = defineRoute(
  { service: "connections", access: "connections:manage" },
  {
    operationId: "deleteCluster",
    method: "delete",
    path: "/v1/clusters/{clusterId}",
    tags,
    summary: "Delete a cluster: its tunnel closes and its token stops working",
    description: "Deletes the cluster: its tunnel closes and the tunnel token stops working; audited.",
    request: { params: ClusterIdParams },
    responses: { 204: NoContent },
  },
);

export const rotateClusterTunnelTokenRoute = defineRoute(
  { service: "connections", access: "connections:manage" },
  {
    operationId: "rotateClusterTunnelToken",
    method: "post",
    path: "/v1/clusters/{clusterId}/rotate-tunnel-token",
    tags,
    summary: "A new tunnel token (shown once); a connected relay receives it and reconnects with it",
    description:
      "Issues a new tunnel token (shown once). The old one stops opening tunnels at once; a connected relay receives the new one over its tunnel, stores it and reconnects; audited. With `deliver=false` the token is not sent down the tunnel and the tunnel in use is closed at once: for a token that may have leaked, whose holder may be the relay connected now. Install the new token on the relay by hand (its Helm value or secret).",
    request: {
      params: ClusterIdParams,
      query: z.object({
        deliver: z
          .enum(["true", "false"])
          .optional()
          .openapi({
            param: { name: "deliver", in: "query" },
            description:
              "`false`: do not send the new token to the connected relay; close its tunnel now (default `true`)",
          }),
      }),
    },
    responses: { 200: jsonBody(TunnelTokenRotation, "Rotated") },
  },
);

export const openClusterTunnelRoute = defineRoute(
  { service: "connections", access: "authenticated", websocket: true },
  {
    operationId: "openClusterTunnel",
    method: "get",
    path: "/v1/clusters/{clusterId}/tunnel",
    tags,
    summary:
      "The relay's tunnel: a WebSocket authenticated by the cluster's tunnel token, carrying HTTP/2 (the platform is the client)",
    description:
      "Where the relay dials out: a WebSocket authenticated by the cluster's tunnel token, carrying HTTP/2 with the platform as the client. Every request sent down it is signed with the project's key and verified by the relay.",
    request: { params: ClusterIdParams },
    responses: { 101: { description: "Switching protocols" } },
  },
);

const proxyResponses = { 200: { description: "The cluster API server's answer, streamed" } };
const proxySummary = "Kubernetes API of the cluster, policy-checked first (cluster:<verb>)";

function proxyRoute<const M extends "get" | "post" | "put" | "patch" | "delete">(method: M, operationId: string) {
  return defineRoute(
    { service: "connections", access: "connectors:call" },
    {
      operationId,
      method,
      path: "/v1/clusters/{clusterId}/proxy/{path}",
      tags,
      summary: proxySummary,
      description: `Passes the ${method.toUpperCase()} with its path, query and body to the cluster's API server through its relay, responses streamed back (a \`?watch=true\` list streams events; a client abort cancels it). The request is first parsed into Kubernetes request attributes (group, version, namespace, resource, name, subresource, verb) and decided as \`cluster:<verb>\`: a deny is 403 \`policy-denied\` with the rule id. 503 \`cluster-disconnected\` when no relay is connected.`,
      request: { params: ClusterProxyParams },
      responses: proxyResponses,
    },
  );
}

export const clusterProxyGetRoute = proxyRoute("get", "clusterProxyGet");
export const clusterProxyPostRoute = proxyRoute("post", "clusterProxyPost");
export const clusterProxyPutRoute = proxyRoute("put", "clusterProxyPut");
export const clusterProxyPatchRoute = proxyRoute("patch", "clusterProxyPatch");
export const clusterProxyDeleteRoute = proxyRoute("delete", "clusterProxyDelete");

export const clusterRoutes = [
  createClusterRoute,
  listClustersRoute,
  getClusterRoute,
  updateClusterRoute,
  deleteClusterRoute,
  rotateClusterTunnelTokenRoute,
  openClusterTunnelRoute,
  clusterProxyGetRoute,
  clusterProxyPostRoute,
  clusterProxyPutRoute,
  clusterProxyPatchRoute,
  clusterProxyDeleteRoute,
] as const;
