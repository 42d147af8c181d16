import {
  type AuthorizeRequest,
  type AuthorizeResponse,
  PERMISSIONS,
  type Permission,
  type Principal,
  TENANCY_INTERNAL_ROUTES,
} from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { Context } from "hono";
import { LRUCache } from "lru-cache";
import { requirePrincipal, type ServiceEnv } from "./app.ts";
import type { ServiceClient } from "./client.ts";
import { servicePrincipal } from "./identity.ts";
import { callInternal } from "./internal-route.ts";
import { noteResourceOrg } from "./resource-org.ts";

/** Answers authorization questions; tenancy answers them from its tables, others ask tenancy. */
export interface Authorizer {
  check(request: AuthorizeRequest): Promise<AuthorizeResponse>;
}

export type AuthzScope = { orgId: string } | { projectId: string };

/**
 * Throws 404 when the principal cannot see the org/project (ids do not leak across organizations),
 * 403 when it can but its role is too low. Returns the decision with the resolved ids and roles.
 */
export async function authorize(
  c: Context<ServiceEnv>,
  authorizer: Authorizer,
  permission: Permission,
  scope: AuthzScope,
): Promise<AuthorizeResponse> {
  const principal = requirePrincipal(c);
  const result = noteDecision(await authorizer.check({ principal, permission, ...scope }));
  if (result.decision === "not_found") {
    const what = "orgId" in scope ? `Organization ${scope.orgId}` : `Project ${scope.projectId}`;
    throw new ProblemError("not-found", { detail: `${what} was not found` });
  }
  if (result.decision === "forbidden") {
    throw new ProblemError("forbidden", {
      detail: `This needs the permission ${permission} (role ${PERMISSIONS[permission].minRole} or above)`,
    });
  }
  return result;
}

/** Asks tenancy over its internal API, caching each answer for a few seconds. */
export class RemoteAuthorizer implements Authorizer {
  private readonly cache: LRUCache<string, Promise<AuthorizeResponse>>;
  private readonly client: ServiceClient;
  private readonly caller: Principal;

  constructor(client: ServiceClient, options: { ttlMs?: number; callerService: string }) {
    this.client = client;
    this.cache = new LRUCache({ max: 10_000, ttl: options.ttlMs ?? 3000 });
    this.caller = servicePrincipal(options.callerService);
  }

  check(request: AuthorizeRequest): Promise<AuthorizeResponse> {
    const key = JSON.stringify([request.principal, request.permission, request.orgId, request.projectId]);
    const hit = this.cache.get(key);
    if (hit) return hit.then(noteDecision);
    const value = callInternal(this.client, TENANCY_INTERNAL_ROUTES.authorize, {
      principal: this.caller,
      body: request,
    });
    this.cache.set(key, value);
    value.catch(() => {
      if (this.cache.peek(key) === value) this.cache.delete(key);
    });
    return value.then(noteDecision);
  }
}

/** The organization a decision resolved is the one the request acts in (see `noteResourceOrg`). */
export function noteDecision(result: AuthorizeResponse): AuthorizeResponse {
  if (result.decision !== "not_found") noteResourceOrg(result.orgId);
  return result;
}
