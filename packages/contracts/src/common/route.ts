import { errorResponses } from "@agentplane/problem-details";
import type { RouteConfig } from "@hono/zod-openapi";
import type { Permission, RouteAccess } from "./permissions.ts";

/** The services that own `/v1` routes; the gateway dispatches to them by this name. */
export const SERVICE_NAMES = ["tenancy", "sandbox", "audit", "governance", "connections", "inference"] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export interface RouteMeta {
  service: ServiceName;
  access: RouteAccess;
  /**
   * On an `authenticated` route: the permission a scoped API token must name to reach it. Without
   * one, only unrestricted tokens reach such a route.
   */
  tokenScope?: Permission;
  /** A WebSocket upgrade (GET with `Upgrade: websocket`) rather than a plain request. */
  websocket?: boolean;
}

export type ContractRoute<R extends RouteConfig = RouteConfig> = R & {
  operationId: string;
  "x-service": ServiceName;
  "x-permission": RouteAccess;
  "x-token-scope"?: Permission;
  "x-websocket"?: boolean;
};

/**
 * Defines one `/v1` operation: the OpenAPI route (from `createRoute`'s shape) plus the service
 * that serves it and the permission it needs. Shared error responses and bearer security are added.
 */
export function defineRoute<const R extends RouteConfig & { operationId: string }>(
  meta: RouteMeta,
  config: R,
): ContractRoute<R> {
  const route = {
    ...config,
    responses: { ...errorResponses, ...config.responses },
    security: meta.access === "public" ? [] : [{ bearerAuth: [] }],
    "x-service": meta.service,
    "x-permission": meta.access,
    ...(meta.tokenScope ? { "x-token-scope": meta.tokenScope } : {}),
    ...(meta.websocket ? { "x-websocket": true } : {}),
  };
  return route as unknown as ContractRoute<R>;
}
