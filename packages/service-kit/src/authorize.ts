import {
  type AuthorizeRequest,
  type AuthorizeResponse,
  internalAuthorizeRoute,
  type OrgRole,
  PERMISSIONS,
  type Permission,
  type Principal,
  type ProjectRole,
} from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { LRUCache } from "lru-cache";
import { requirePrincipal, type ServiceContext } from "./app.ts";
import type { ServiceClient } from "./client.ts";
import { servicePrincipal } from "./identity.ts";
import { callInternal } from "./internal-route.ts";
import { noteResourceOrg } from "./resource-org.ts";

/** Answers authorization questions; tenancy answers them from its tables, others ask tenancy. */
export interface Authorizer {
  check(request: AuthorizationQuestion): Promise<AuthorizeResponse>;
}

/** Tenancy's question, plus the sandbox read when there is one (tenancy is never told it). */
export type AuthorizationQuestion = AuthorizeRequest & { sandboxId?: string };

/**
 * What an authorization question is about: an organization, or a project (with the sandbox it
 * reads, for authorizers that decide sandbox tokens, which may read their own sandbox only).
 */
export type AuthzScope = ({ orgId: string } | { projectId: string; sandboxId?: string }) & {
  /** The resource a 404 names instead of the org or project ("Cluster cl_1"): one loaded by id. */
  resource?: string;
};

/** Who asks, before authorization: the principal and the request it came in. */
export interface Requester {
  principal: Principal;
  requestId?: string | undefined;
}

/**
 * The caller of a service verb: who, from which request, authorized in which organization (and
 * project), with the roles the decision found. `authorize` is the only thing that makes one for a
 * request; a service acting on its own makes one naming itself.
 */
export interface Caller extends Requester {
  orgId: string;
  projectId?: string;
  orgRole?: OrgRole;
  projectRole?: ProjectRole;
  /** The teams of the organization the acting user is in (project decisions). */
  teamIds?: string[];
}

/** A caller authorized on a project. */
export type ProjectCaller = Caller & { projectId: string };

/**
 * The one authorization call of every service. Throws 404 when the principal cannot see the org or
 * project (ids do not leak across organizations; `scope.resource` names a resource loaded by id in
 * that 404), 403 when it can but its role is too low (an API token acts with the lower of its own
 * role and its user's, as tenancy decides). Returns the caller to hand to service verbs. `from` is
 * the request's context in a handler, or who asks elsewhere (a WebSocket upgrade, an ingress request).
 */
export async function authorize(
  from: ServiceContext | Requester,
  authorizer: Authorizer,
  permission: Permission,
  scope: { projectId: string; sandboxId?: string; resource?: string },
): Promise<ProjectCaller>;
export async function authorize(
  from: ServiceContext | Requester,
  authorizer: Authorizer,
  permission: Permission,
  scope: AuthzScope,
): Promise<Caller>;
export async function authorize(
  from: ServiceContext | Requester,
  authorizer: Authorizer,
  permission: Permission,
  scope: AuthzScope,
): Promise<Caller> {
  const requester = requesterOf(from);
  const { resource, ...question } = scope;
  const what = resource ?? ("orgId" in scope ? `Organization ${scope.orgId}` : `Project ${scope.projectId}`);
  const notFound = () => new ProblemError("not-found", { detail: `${what} was not found` });
  const result = noteDecision(await authorizer.check({ principal: requester.principal, permission, ...question }));
  if (result.decision === "not_found") throw notFound();
  if (result.decision === "forbidden") {
    throw new ProblemError("forbidden", {
      detail: `This needs the permission ${permission} (role ${PERMISSIONS[permission].minRole} or above)`,
    });
  }
  const orgId = result.orgId ?? ("orgId" in scope ? scope.orgId : undefined);
  if (!orgId) throw notFound();
  const projectId = result.projectId ?? ("projectId" in scope ? scope.projectId : undefined);
  return {
    principal: requester.principal,
    ...(requester.requestId !== undefined ? { requestId: requester.requestId } : {}),
    orgId,
    ...(projectId !== undefined ? { projectId } : {}),
    ...(result.orgRole ? { orgRole: result.orgRole } : {}),
    ...(result.projectRole ? { projectRole: result.projectRole } : {}),
    ...(result.teamIds ? { teamIds: result.teamIds } : {}),
  };
}

/** The principal and request id of a handler's request (401 without a principal). */
export function requesterOf(from: ServiceContext | Requester): Requester {
  if (!("req" in from)) return from;
  const requestId = from.get("requestId");
  return { principal: requirePrincipal(from), ...(requestId !== undefined ? { requestId } : {}) };
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

  check({ sandboxId: _sandbox, ...request }: AuthorizationQuestion): Promise<AuthorizeResponse> {
    const key = JSON.stringify([request.principal, request.permission, request.orgId, request.projectId]);
    const hit = this.cache.get(key);
    if (hit) return hit.then(noteDecision);
    const value = callInternal(this.client, internalAuthorizeRoute, {
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

/**
 * Decides sandbox tokens here and asks `inner` about everyone else (tenancy knows no sandboxes): a
 * sandbox token sees its own project only, and may use `permissions` on its own sandbox there (the
 * question must name the sandbox); anything else it may not (see docs/sandboxes.md for the list
 * across the platform).
 */
export function withSandboxTokens(inner: Authorizer, permissions: readonly Permission[]): Authorizer {
  const allowed: ReadonlySet<string> = new Set(permissions);
  return {
    async check(request) {
      const { principal, permission, projectId, sandboxId } = request;
      if (principal.type !== "sandbox") return inner.check(request);
      const own =
        projectId !== undefined &&
        principal.projectId === projectId &&
        (sandboxId === undefined || principal.sandboxId === sandboxId);
      if (!own) return { decision: "not_found" };
      const ids = { ...(principal.orgId ? { orgId: principal.orgId } : {}), projectId };
      return { decision: allowed.has(permission) && sandboxId !== undefined ? "allowed" : "forbidden", ...ids };
    },
  };
}
