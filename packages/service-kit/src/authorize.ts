import {
  type AuthorizeRequest,
  type AuthorizeResponse,
  PERMISSIONS,
  type Permission,
  type Principal,
  TENANCY_INTERNAL,
} from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { Context } from "hono";
import { requirePrincipal, type ServiceEnv } from "./app.ts";
import type { ServiceClient } from "./client.ts";
import { servicePrincipal } from "./identity.ts";
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
  private readonly cache = new Map<string, { expires: number; value: Promise<AuthorizeResponse> }>();
  private readonly client: ServiceClient;
  private readonly ttlMs: number;
  private readonly caller: Principal;

  constructor(client: ServiceClient, options: { ttlMs?: number; callerService: string }) {
    this.client = client;
    this.ttlMs = options.ttlMs ?? 3000;
    this.caller = servicePrincipal(options.callerService);
  }

  check(request: AuthorizeRequest): Promise<AuthorizeResponse> {
    const key = JSON.stringify([request.principal, request.permission, request.orgId, request.projectId]);
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit && hit.expires > now) return hit.value.then(noteDecision);
    const value = this.client.request<AuthorizeResponse>("POST", TENANCY_INTERNAL.authorize, {
      principal: this.caller,
      body: request,
    });
    this.cache.set(key, { expires: now + this.ttlMs, value });
    value.catch(() => this.cache.delete(key));
    if (this.cache.size > 10_000) this.cache.clear();
    return value.then(noteDecision);
  }
}

/** The organization a decision resolved is the one the request acts in (see `noteResourceOrg`). */
export function noteDecision(result: AuthorizeResponse): AuthorizeResponse {
  if (result.decision !== "not_found") noteResourceOrg(result.orgId);
  return result;
}
