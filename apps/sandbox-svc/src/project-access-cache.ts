import {
  type AuthorizeResponse,
  PERMISSIONS,
  type Permission,
  type Principal,
  type ProjectRole,
  projectRoleAtLeast,
} from "@agentplane/contracts";
import { type AuthorizationQuestion, type Authorizer, noteDecision } from "@agentplane/service-kit";
import { LRUCache } from "lru-cache";

/** As long as a distributed replica's `RemoteAuthorizer` keeps tenancy's answers. */
export const PROJECT_ACCESS_TTL_MS = 3000;

/** A scoped API token uses only the permissions it names (as tenancy decides). */
function scopeAllows(principal: Principal, permission: string): boolean {
  return principal.type !== "api_token" || !principal.scopes || principal.scopes.includes(permission);
}

/**
 * Tenancy's `allowed` answers about a project, kept per (principal, project) for
 * `PROJECT_ACCESS_TTL_MS`. Such an answer carries the principal's role on the project, which is
 * what tenancy decides every project permission on: a later question about another project
 * permission that role (and a scoped token's scopes) allows is answered from it. So the exec that
 * follows a create, which asks `sandboxes:exec` after `sandboxes:write`, reads no tenancy tables.
 * Anything else (a role too low, another project, an org permission) asks tenancy; denies and
 * failures are never kept. For tenancy in this process (all-in-one); a `RemoteAuthorizer` keeps
 * its own answers for as long.
 */
export class ProjectAccessCache implements Authorizer {
  private readonly inner: Authorizer;
  private readonly cache: LRUCache<string, AuthorizeResponse>;

  constructor(inner: Authorizer, options: { ttlMs?: number; clock?: { now(): number } } = {}) {
    this.inner = inner;
    this.cache = new LRUCache({
      max: 10_000,
      ttl: options.ttlMs ?? PROJECT_ACCESS_TTL_MS,
      ...(options.clock ? { perf: options.clock, ttlResolution: 0 } : {}),
    });
  }

  async check(request: AuthorizationQuestion): Promise<AuthorizeResponse> {
    const { principal, permission, projectId } = request;
    const rule = Object.hasOwn(PERMISSIONS, permission) ? PERMISSIONS[permission as Permission] : undefined;
    if (rule?.scope !== "project" || projectId === undefined) return this.inner.check(request);
    const key = JSON.stringify([principal, request.orgId ?? null, projectId]);
    const known = this.cache.get(key);
    if (
      known &&
      projectRoleAtLeast(known.projectRole, rule.minRole as ProjectRole) &&
      scopeAllows(principal, permission)
    ) {
      return noteDecision({ ...known });
    }
    const answer = await this.inner.check(request);
    if (answer.decision === "allowed" && answer.projectRole) this.cache.set(key, answer);
    return answer;
  }
}
