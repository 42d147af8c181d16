import { z } from "@hono/zod-openapi";
import { defineInternalRoute, type InternalRoute, jsonBody, jsonOk } from "../common/internal-route.ts";
import { ResolvedPrincipal } from "../tenancy/internal.ts";

export const ResolveTunnelTokenRequest = z.object({ token: z.string().min(1).max(512) });

/** Principal ids of tunnel-token callers start with this (cluster JWT callers carry the cluster id). */
export const TUNNEL_TOKEN_ID_PREFIX = "ctt_";

export const internalResolveTunnelTokenRoute = defineInternalRoute(
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
);

/**
 * The internal connections-svc endpoints, each exported by name above: served with service-kit's
 * `internalRoute`, called with `callInternal`. This list is for checks that walk them all.
 */
export const connectionsInternalRoutes: readonly InternalRoute[] = [internalResolveTunnelTokenRoute];

/**
 * Any method: a proxy request forwarded by the replica that received it to the replica holding
 * the cluster's tunnel (`/internal/clusters/{clusterId}/forward/{path}`); the caller's identity
 * travels in the internal identity header, the policy decision was already made.
 */
export const FORWARD_TO_TUNNEL_PATH = "/internal/clusters/{clusterId}/forward";
