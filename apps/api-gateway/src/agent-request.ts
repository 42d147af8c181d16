import { PERMISSIONS, type Principal, secureSessionCookie } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { RemoteAuthorizer, ServiceClient } from "@agentplane/service-kit";
import { type AgentFront, agentPermission, agentRoute } from "./agent-front.ts";
import { type RequestAuditor, shouldAudit } from "./audit.ts";
import { bearerToken } from "./authn/authenticator.ts";
import { authenticateSession, ownOrigins, sessionSecretOf } from "./authn/session.ts";
import type { GatewayDeps } from "./deps.ts";
import { FailedAuthentications } from "./failed-authentications.ts";
import type { HeaderReader } from "./forward.ts";
import { addressLimitKey, limitPrincipal } from "./rate-limit.ts";

export interface AgentRequestContext {
  agent: AgentFront;
  deps: GatewayDeps;
  auditor: RequestAuditor;
  fail: (error: ProblemError, extra?: Record<string, string>) => Response;
}

export interface AgentRequest {
  request: Request;
  url: URL;
  method: string;
  header: HeaderReader;
  requestId: string;
  ip: string | undefined;
}

const authorizers = new WeakMap<GatewayDeps, RemoteAuthorizer>();

function authorizerOf(deps: GatewayDeps): RemoteAuthorizer {
  let authorizer = authorizers.get(deps);
  if (!authorizer) {
    const tenancy = deps.targets.tenancy;
    if (!tenancy) throw new ProblemError("service-unavailable", { detail: "Authorization is not available" });
    authorizer = new RemoteAuthorizer(new ServiceClient("tenancy", tenancy.fetch, deps.keys), {
      callerService: "api-gateway",
    });
    authorizers.set(deps, authorizer);
  }
  return authorizer;
}

/**
 * A request below /agent: the runtime's page and assets and its webhook receiver pass through
 * (the receiver verifies per subscription); its API needs a token (or the console's session)
 * authorized on the runtime's project for the permission the method and path ask for. Everything
 * is audited like any route.
 */
export async function agentRequest(ctx: AgentRequestContext, req: AgentRequest): Promise<Response> {
  const { agent, deps, auditor, fail } = ctx;
  const { url, method, header, requestId } = req;
  const route = agentRoute(method, url.pathname);
  if (route.kind === "redirect") return new Response(null, { status: 308, headers: { location: `${url.pathname}/` } });
  if (route.kind === "none") return fail(new ProblemError("not-found", { detail: `No route for ${url.pathname}` }));

  const audit = (principal: Principal | undefined, status: number) => {
    if (!shouldAudit(method, status)) return;
    auditor.record({
      principal,
      operationId: `agent:${route.kind}`,
      params: agent.target ? { projectId: agent.target.projectId } : {},
      status,
      requestId,
      ip: req.ip,
      userAgent: header.get("user-agent") ?? undefined,
      method,
      path: url.pathname,
    });
  };
  const answer = async (
    principal: Principal | undefined,
    extra: Record<string, string> = {},
    options: { manage?: boolean } = {},
  ) => {
    try {
      const response = await agent.forward(req.request, url, route, requestId, options);
      for (const [k, v] of Object.entries(extra)) response.headers.set(k, v);
      audit(principal, response.status);
      return response;
    } catch (err) {
      if (!(err instanceof ProblemError)) throw err;
      audit(principal, err.status);
      return fail(err);
    }
  };

  if (route.kind === "page") return answer(undefined);
  if (route.kind === "webhook") {
    // Senders carry no token of ours: the limit is per address.
    const limit = await deps.rateLimiter.hit(addressLimitKey(req.ip));
    if (!limit.allowed) {
      audit(undefined, 429);
      return fail(new ProblemError("rate-limited", { detail: "Too many webhook deliveries from this address" }), {
        "retry-after": String(limit.resetSeconds),
      });
    }
    return answer(undefined);
  }

  // Refused credentials count toward the address's budget, and a spent budget refuses before any
  // lookup, as on any route. The console's session cookie is taken as on /v1 (same origin, CSRF
  // token on a change): the web UI shares the console's origin and keeps no token of its own.
  const bearer = bearerToken(header);
  const sessionSecret = bearer
    ? undefined
    : sessionSecretOf(header, secureSessionCookie(url.protocol.slice(0, -1), deps.publicUrl));
  const lookup = (): Promise<Principal> => {
    if (!sessionSecret) return deps.authenticator.authenticate(bearer ?? "");
    return authenticateSession(
      deps.authenticator,
      sessionSecret,
      header,
      method,
      ownOrigins(url.origin, deps.publicUrl),
    );
  };
  let principal: Principal;
  try {
    principal = await (bearer || sessionSecret
      ? FailedAuthentications.of(deps.rateLimiter).guard(addressLimitKey(req.ip), lookup, (failure) => {
          deps.logger?.warn({ err: failure, requestId }, "failed authentication not counted");
        })
      : lookup());
  } catch (err) {
    const problem = err instanceof ProblemError ? err : new ProblemError("service-unavailable");
    audit(undefined, problem.status);
    return fail(problem);
  }
  const target = agent.target;
  if (!target) {
    audit(principal, 503);
    return fail(new ProblemError("service-unavailable", { detail: "No agent runtime is connected to this platform" }));
  }
  const permission = agentPermission(method, route.runtimePath);
  if (principal.scopes && !principal.scopes.includes(permission)) {
    audit(principal, 403);
    return fail(
      new ProblemError("forbidden", {
        detail: `This token is restricted to ${principal.scopes.join(", ")}; this needs ${permission}`,
      }),
    );
  }
  const decision = await authorizerOf(deps).check({ principal, permission, projectId: target.projectId });
  if (decision.decision === "not_found") {
    // Another organization's caller learns nothing about this runtime, as for any project.
    audit(principal, 404);
    return fail(new ProblemError("not-found", { detail: `No route for ${url.pathname}` }));
  }
  if (decision.decision === "forbidden") {
    audit(principal, 403);
    return fail(
      new ProblemError("forbidden", {
        detail: `This needs the permission ${permission} (project role ${PERMISSIONS[permission].minRole} or above)`,
      }),
    );
  }
  const { headers: limitHeaders, refused } = await limitPrincipal(deps, principal);
  if (refused) {
    audit(principal, 429);
    return fail(refused);
  }
  // A chat turn may change the agent (its settings, its schedules) through its tools only for a
  // caller who could make those changes through the API.
  const manage = permission === "agent:chat" ? await mayManage(deps, principal, target.projectId) : undefined;
  return answer(principal, limitHeaders, manage === undefined ? {} : { manage });
}

async function mayManage(deps: GatewayDeps, principal: Principal, projectId: string): Promise<boolean> {
  if (principal.scopes && !principal.scopes.includes("agent:manage")) return false;
  const decision = await authorizerOf(deps).check({ principal, permission: "agent:manage", projectId });
  return decision.decision === "allowed";
}
