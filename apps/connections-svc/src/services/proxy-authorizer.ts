import type { AuthorizeRequest, AuthorizeResponse } from "@agentplane/contracts";
import { type Authorizer, noteDecision, RemoteAuthorizer } from "@agentplane/service-kit";
import { LRUCache } from "lru-cache";
import type { ConnectionsContext } from "../context.ts";

/** As long as a distributed replica's `RemoteAuthorizer` keeps tenancy's answers. */
export const PROXY_AUTHZ_TTL_MS = 3000;

/**
 * Tenancy's answers for the proxies' hot paths, kept per (principal, permission, scope) for
 * `PROXY_AUTHZ_TTL_MS`: the same reuse a distributed replica gets from its `RemoteAuthorizer`,
 * also when tenancy's authorizer runs in this process (all-in-one), where every check would
 * otherwise read four tables. Failures are not kept; a hit still notes the request's organization.
 */
export class CachedAuthorizer implements Authorizer {
  private readonly inner: Authorizer;
  private readonly cache: LRUCache<string, Promise<AuthorizeResponse>>;

  constructor(inner: Authorizer, options: { ttlMs?: number; clock?: { now(): number } } = {}) {
    this.inner = inner;
    this.cache = new LRUCache({
      max: 10_000,
      ttl: options.ttlMs ?? PROXY_AUTHZ_TTL_MS,
      ...(options.clock ? { perf: options.clock, ttlResolution: 0 } : {}),
    });
  }

  check(request: AuthorizeRequest): Promise<AuthorizeResponse> {
    const key = JSON.stringify([request.principal, request.permission, request.orgId, request.projectId]);
    const hit = this.cache.get(key);
    if (hit) return hit.then(noteDecision);
    const value = this.inner.check(request);
    this.cache.set(key, value);
    value.catch(() => {
      if (this.cache.peek(key) === value) this.cache.delete(key);
    });
    return value;
  }
}

const authorizers = new WeakMap<ConnectionsContext, Authorizer>();

/** The authorizer of the proxies: the context's own when it already caches (a `RemoteAuthorizer`). */
export function proxyAuthorizer(ctx: ConnectionsContext): Authorizer {
  let authorizer = authorizers.get(ctx);
  if (!authorizer) {
    authorizer = ctx.authorizer instanceof RemoteAuthorizer ? ctx.authorizer : new CachedAuthorizer(ctx.authorizer);
    authorizers.set(ctx, authorizer);
  }
  return authorizer;
}
