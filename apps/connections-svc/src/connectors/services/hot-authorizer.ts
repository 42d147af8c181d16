import type { AuthorizeRequest, AuthorizeResponse } from "@agentplane/contracts";
import { type Authorizer, RemoteAuthorizer } from "@agentplane/service-kit";
import { LRUCache } from "lru-cache";

/** How long the tool call and list paths reuse an authorization answer (as `RemoteAuthorizer` does). */
export const AUTHZ_FRESH_MS = 3_000;

/**
 * The authorizer of the tool call and list paths (REST and MCP). A `RemoteAuthorizer` (distributed
 * deployment) already reuses answers for 3 s and is used as it is; tenancy's own authorizer (all in
 * one process) reads four tables per question, so its answers are reused here for the same 3 s: a
 * role or team change reaches tool calls as soon in both deployments. Failures are never reused.
 */
export function hotAuthorizer(authorizer: Authorizer): Authorizer {
  if (authorizer instanceof RemoteAuthorizer) return authorizer;
  const cache = new LRUCache<string, Promise<AuthorizeResponse>>({ max: 10_000, ttl: AUTHZ_FRESH_MS });
  return {
    check(request: AuthorizeRequest): Promise<AuthorizeResponse> {
      const key = JSON.stringify([request.principal, request.permission, request.orgId, request.projectId]);
      const hit = cache.get(key);
      if (hit) return hit;
      const value = authorizer.check(request);
      cache.set(key, value);
      value.catch(() => {
        if (cache.peek(key) === value) cache.delete(key);
      });
      return value;
    },
  };
}
