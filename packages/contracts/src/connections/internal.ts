import { z } from "@hono/zod-openapi";
import { defineInternalRoute, jsonBody, jsonOk } from "../common/internal-route.ts";
import { ResolvedPrincipal } from "../tenancy/internal.ts";

export const ResolveTunnelTokenRequest = z.object({ token: z.string().min(1).max(512) });

/** Principal ids of tunnel-token callers start with this (cluster JWT callers carry the cluster id). */
export const TUNNEL_TOKEN_ID_PREFIX = "ctt_";

/** The internal connections-svc endpoints as contracts: served with service-kit's `internalRoute`, called with `callInternal`. */
export const CONNECTIONS_INTERNAL_ROUTES = {
  resolveTunnelToken: defineInternalRoute(
    { service: "connections" },
    {
      method: "post",
      path: "/internal/authn/tunnel-token",
      operationId: "internalResolveTunnelToken",
      summary: "Resolve a tunnel token",
      description: "The principal (type `cluster`) of a relay's tunnel token; 401 problem when unknown or rotated out.",
      request: jsonBody(ResolveTunnelTokenRequest, "The token as presented"),
      responses: jsonOk(ResolvedPrincipal, "The relay's principal"),
    },
  ),
};

/** Internal connections-svc endpoints (service principals only; never routed by the gateway). */
export const CONNECTIONS_INTERNAL = {
  /** POST `{token}` → `{principal}` (type `cluster`, id = the tunnel token id), or 401 problem. */
  resolveTunnelToken: CONNECTIONS_INTERNAL_ROUTES.resolveTunnelToken.path,
  /**
   * Any method: a proxy request forwarded by the replica that received it to the replica holding
   * the cluster's tunnel (`/internal/clusters/{clusterId}/forward/{path}`); the caller's identity
   * travels in the internal identity header, the policy decision was already made.
   */
  forwardToTunnel: "/internal/clusters/{clusterId}/forward",
} as const;
