import { errorResponses } from "@agentplane/problem-details";
import type { RouteConfig } from "@hono/zod-openapi";

/** A problem response of the shared set (`errorResponses`), by status. */
export type RuntimeErrorStatus = keyof typeof errorResponses;

export interface RuntimeRouteMeta<E extends RuntimeErrorStatus> {
  /**
   * The problem responses the operation documents, taken from the shared set. Unlike a `/v1`
   * route, which documents all of them, a runtime operation lists only those it answers.
   */
  errors: readonly E[];
}

export type RuntimeRoute<R extends RouteConfig, E extends RuntimeErrorStatus = never> = Omit<R, "responses"> & {
  operationId: string;
  responses: Pick<typeof errorResponses, E> & R["responses"];
};

/**
 * Defines one operation of the agent runtime's API (`/agents/**`, served by the runtime, listed in
 * its `/openapi.json`): the OpenAPI route plus the shared problem responses named in `errors`. The
 * runtime's counterpart of `defineRoute`, without what only the platform's `/v1` routes carry: the
 * runtime authenticates nothing (the platform routing in front of it does), so there is no bearer
 * security, and no service or permission to dispatch on. A response the route lists itself (e.g.
 * a 502 described by the 500 problem) is kept as it is.
 */
export function defineRuntimeRoute<
  const R extends RouteConfig & { operationId: string },
  const E extends RuntimeErrorStatus = never,
>(meta: RuntimeRouteMeta<E>, config: R): RuntimeRoute<R, E> {
  const errors = Object.fromEntries(meta.errors.map((status) => [status, errorResponses[status]]));
  return { ...config, responses: { ...errors, ...config.responses } } as unknown as RuntimeRoute<R, E>;
}
