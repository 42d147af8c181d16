import { errorResponses } from "@agentplane/problem-details";
import type { RouteConfig } from "@hono/zod-openapi";
import type { ServiceName } from "./route.ts";

export interface InternalRouteMeta {
  /** The service that serves it. */
  service: ServiceName;
  /** The only services that may call it (default: any service identity). */
  callers?: readonly string[];
}

export type InternalRoute<R extends RouteConfig = RouteConfig> = R & {
  operationId: string;
  "x-service": ServiceName;
  "x-internal": true;
  "x-callers"?: readonly string[];
};

/**
 * Defines one internal endpoint (`/internal/**`): the OpenAPI route of its request and answer,
 * the service that serves it and, optionally, the only services that may call it. Internal
 * endpoints answer service identities only (the service-only middleware of service-kit enforces
 * it), are never routed by the gateway and are not in the public `/v1` document. Errors are the
 * shared problem responses.
 */
export function defineInternalRoute<const R extends RouteConfig & { operationId: string }>(
  meta: InternalRouteMeta,
  config: R,
): InternalRoute<R> {
  const route = {
    ...config,
    responses: { ...errorResponses, ...config.responses },
    "x-service": meta.service,
    "x-internal": true,
    ...(meta.callers ? { "x-callers": meta.callers } : {}),
  };
  return route as unknown as InternalRoute<R>;
}

/** A JSON request body of `schema` (required: a missing or non-JSON body is a 400 problem). */
export function jsonBody<S>(schema: S, description: string) {
  return { body: { required: true, description, content: { "application/json": { schema } } } } as const;
}

/** A 200 JSON answer of `schema`. */
export function jsonOk<S>(schema: S, description: string) {
  return { 200: { description, content: { "application/json": { schema } } } } as const;
}
