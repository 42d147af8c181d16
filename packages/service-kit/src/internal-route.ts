import type { InternalRoute, Principal } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { MiddlewareHandler } from "hono";
import type { z } from "zod";
import { requirePrincipal, type ServiceEnv } from "./app.ts";
import type { ServiceClient } from "./client.ts";
import { servicePrincipal } from "./identity.ts";

/**
 * The gate of every internal endpoint: the caller must carry a verified service identity (else a
 * 401 problem), and be one of `callers` when they are named (else a 403 problem). It runs before
 * the body is read or validated, so a user token learns nothing about an internal body's shape.
 */
export function serviceOnly(callers?: readonly string[]): MiddlewareHandler<ServiceEnv> {
  const allowed = callers ? new Set(callers.map((name) => servicePrincipal(name).id)) : undefined;
  return async (c, next) => {
    const principal = requirePrincipal(c);
    if (principal.type !== "service") {
      throw new ProblemError("forbidden", { detail: "Internal endpoints are for services only" });
    }
    if (allowed && !allowed.has(principal.id)) {
      throw new ProblemError("forbidden", { detail: `This internal endpoint is for ${callers!.join(", ")} only` });
    }
    await next();
  };
}

/**
 * An internal route contract ready for `app.openapi`: gated by `serviceOnly` (with the contract's
 * callers), then validated by the contract's schemas (a malformed body or parameter is the shared
 * 400 problem naming the field).
 */
export function internalRoute<R extends InternalRoute>(route: R): R & { middleware: MiddlewareHandler } {
  return { ...route, middleware: serviceOnly(route["x-callers"]) as MiddlewareHandler };
}

type JsonSchemaOf<T> = T extends { content: { "application/json": { schema: infer S } } } ? S : never;
type RequestOf<R> = R extends { request: infer Q } ? Q : Record<string, never>;
type BodyOf<R> = JsonSchemaOf<RequestOf<R> extends { body: infer B } ? B : never>;
type ParamsOf<R> = RequestOf<R> extends { params: infer P } ? P : never;
type OkOf<R> = R extends { responses: { 200: infer O } } ? JsonSchemaOf<O> : never;

/** What `callInternal` sends: the acting principal, path parameters and body as the contract says. */
export type InternalCall<R> = {
  principal: Principal;
  requestId?: string | undefined;
  /** Aborts the call (a deadline: `AbortSignal.timeout(ms)`). */
  signal?: AbortSignal | undefined;
} & ([ParamsOf<R>] extends [never] ? { params?: undefined } : { params: z.input<ParamsOf<R> & z.ZodType> }) &
  ([BodyOf<R>] extends [never] ? { body?: undefined } : { body: z.input<BodyOf<R> & z.ZodType> });

/** The answer of an internal route (its 200 schema's type). */
export type InternalAnswer<R> = [OkOf<R>] extends [never] ? unknown : z.output<OkOf<R> & z.ZodType>;

/**
 * Calls an internal endpoint through its contract: the method and path (with `{param}`s filled)
 * come from the route, the body and the answer are typed by its schemas. Problems are rethrown as
 * `ProblemError` by the client.
 */
export function callInternal<R extends InternalRoute>(
  client: ServiceClient,
  route: R,
  call: InternalCall<R>,
): Promise<InternalAnswer<R>> {
  const params = (call.params ?? {}) as Record<string, string>;
  const path = route.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
  return client.request<InternalAnswer<R>>(route.method.toUpperCase(), path, {
    principal: call.principal,
    ...(call.body !== undefined ? { body: call.body } : {}),
    ...(call.requestId ? { requestId: call.requestId } : {}),
    ...(call.signal ? { signal: call.signal } : {}),
  });
}
