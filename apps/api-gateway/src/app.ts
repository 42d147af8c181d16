import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { buildOpenApiDocument, type Principal, REQUEST_ID_HEADER, RESOURCE_ORG_HEADER } from "@agentplane/contracts";
import { PROBLEM_CONTENT_TYPE, ProblemError, problemResponse } from "@agentplane/problem-details";
import {
  type HttpServiceFetch,
  IdentitySigner,
  MAX_BODY_BYTES,
  type OutgoingRequest,
  type ResponseHeaders,
  ServiceClient,
} from "@agentplane/service-kit";
import { annotateSpan, nameRequestSpan } from "@agentplane/telemetry";
import { AGENT_PREFIX, AgentFront } from "./agent-front.ts";
import { agentRequest } from "./agent-request.ts";
import { RequestAuditor, shouldAudit } from "./audit.ts";
import { AUTH_RETRY_AFTER_SECONDS, bearerToken } from "./authn/authenticator.ts";
import { authenticateSession, ownOrigins, sessionSecretOf, stripSessionCookie } from "./authn/session.ts";
import { DEFAULT_BODY_LIMITS, type GatewayDeps } from "./deps.ts";
import { docsPage, referenceBundle } from "./docs.ts";
import {
  BodyTooLargeError,
  forwardHeaders,
  forwardRequest,
  type HeaderReader,
  IncompleteBodyError,
  readSmallBody,
  requestHeaders,
  toRequest,
} from "./forward.ts";
import { gatewayHealth, type HealthTarget } from "./health.ts";
import { inProcessRequest } from "./in-process-request.ts";
import { type RateLimitResult, rateLimitHeaders } from "./rate-limit.ts";
import { adjustResponseHeaders } from "./response-headers.ts";
import { invalidQuery, RouteTable } from "./route-table.ts";
import { createUpgradeHandler } from "./upgrade.ts";

const mib = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;

export interface Gateway {
  fetch(request: Request, env?: { incoming?: IncomingMessage }): Promise<Response>;
  handleUpgrade: ReturnType<typeof createUpgradeHandler>;
  routes: RouteTable;
  /** The agent runtime behind /agent; `agent.connect(...)` once it runs. */
  agent: AgentFront;
  close(): void;
}

/** Where MCP clients read how this resource server takes tokens (RFC 9728). */
const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource";

function clientIp(env: { incoming?: IncomingMessage } | undefined): string | undefined {
  return env?.incoming?.socket?.remoteAddress ?? undefined;
}

function withHeaders(response: Response, headers: Record<string, string>): Response {
  // Responses from in-process apps may have immutable headers; copy when needed. The organization
  // a service named for the audit record stays inside.
  try {
    for (const [k, v] of Object.entries(headers)) response.headers.set(k, v);
    response.headers.delete(RESOURCE_ORG_HEADER);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    for (const [k, v] of Object.entries(headers)) copy.headers.set(k, v);
    copy.headers.delete(RESOURCE_ORG_HEADER);
    return copy;
  }
}

export function createGateway(deps: GatewayDeps): Gateway {
  const routes = new RouteTable();
  const signer = new IdentitySigner(deps.keys);
  const auditor = new RequestAuditor(deps.bus, {
    ...(deps.logger ? { logger: deps.logger } : {}),
    // Tenancy names the organization of project-, team- and token-scoped requests for their records.
    ...(deps.targets.tenancy ? { tenancy: new ServiceClient("tenancy", deps.targets.tenancy.fetch, deps.keys) } : {}),
  });
  let openapi: string | undefined;
  const agent = new AgentFront();
  agent.connect(deps.agentRuntime);

  const healthPaths = { "/health": "summary", "/health/live": "live", "/health/ready": "ready" } as const;
  const health = (kind: "live" | "ready" | "summary") =>
    gatewayHealth(kind, deps.targets as Record<string, HealthTarget>, deps.rateLimiter.status?.());

  async function handle(request: Request, env?: { incoming?: IncomingMessage }): Promise<Response> {
    const url = new URL(request.url);
    const { reader: header, all: allHeaders } = requestHeaders(request, env?.incoming);
    const incomingId = header.get(REQUEST_ID_HEADER);
    const requestId = incomingId && /^[\w.:-]{1,128}$/.test(incomingId) ? incomingId : randomUUID();
    const method = request.method.toUpperCase();
    const fail = (error: ProblemError, extra: Record<string, string> = {}) =>
      withHeaders(problemResponse(error, { instance: url.pathname, requestId }), {
        [REQUEST_ID_HEADER]: requestId,
        ...extra,
      });

    const ingressTarget = deps.ingress?.parse(header.get("host") ?? url.host);
    if (ingressTarget && deps.ingress) {
      let principal: Principal | undefined;
      const token = bearerToken(header);
      if (token) {
        try {
          principal = await deps.authenticator.authenticate(token);
        } catch (err) {
          if (err instanceof ProblemError) return fail(err);
          throw err;
        }
      }
      return deps.ingress.fetch(request, { ...ingressTarget, requestId, ...(principal ? { principal } : {}) });
    }

    const healthKind = healthPaths[url.pathname as keyof typeof healthPaths];
    if (healthKind && (method === "GET" || method === "HEAD")) return health(healthKind);
    if (url.pathname === "/v1/openapi.json" && method === "GET") {
      openapi ??= JSON.stringify(buildOpenApiDocument(deps.publicUrl ? { serverUrl: deps.publicUrl } : {}));
      return new Response(openapi, { headers: { "content-type": "application/json" } });
    }
    if ((url.pathname === "/docs" || url.pathname === "/docs/") && method === "GET") {
      return new Response(docsPage("/v1/openapi.json", "/docs/reference.js"), {
        headers: { "content-type": "text/html; charset=utf-8" },
      });
    }
    if (url.pathname === "/docs/reference.js" && method === "GET") {
      return new Response(new Uint8Array(await referenceBundle()), {
        headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" },
      });
    }

    if (url.pathname.startsWith(RESOURCE_METADATA_PATH) && method === "GET") {
      // OAuth protected-resource metadata (RFC 9728) for MCP clients: Bearer tokens in the header.
      const base = deps.publicUrl ?? url.origin;
      return new Response(
        JSON.stringify({ resource: `${base}/mcp`, bearer_methods_supported: ["header"], resource_name: "Agentplane" }),
        { headers: { "content-type": "application/json" } },
      );
    }

    if (url.pathname === AGENT_PREFIX || url.pathname.startsWith(`${AGENT_PREFIX}/`)) {
      return agentRequest(
        { agent, deps, auditor, fail },
        { request, url, method, header, requestId, ip: clientIp(env) },
      );
    }

    const match = routes.match(method, url.pathname);
    if (match.kind === "not-found") {
      const page = deps.console && (await deps.console.serve(method, url.pathname, header));
      if (page) return page;
      return fail(new ProblemError("not-found", { detail: `No route for ${url.pathname}` }));
    }
    if (match.kind === "method-not-allowed") {
      return fail(new ProblemError("method-not-allowed", { detail: `${method} is not allowed on ${url.pathname}` }), {
        allow: match.allow.join(", "),
      });
    }
    const { entry, params } = match;
    nameRequestSpan(method, entry.template);
    if (entry.websocket) {
      // A WebSocket endpoint reached by plain HTTP (RFC 9110 §15.5.22).
      return fail(
        new ProblemError("upgrade-required", {
          detail: `${url.pathname} is a WebSocket endpoint: send the request with Upgrade: websocket`,
        }),
        { upgrade: "websocket", connection: "Upgrade" },
      );
    }
    const audit = (
      principal: Principal | undefined,
      status: number,
      response?: Response,
      resourceOrg?: string,
      soon = false,
    ) => {
      if (!shouldAudit(method, status)) return;
      (soon ? auditor.recordSoon : auditor.record).call(auditor, {
        response,
        resourceOrg,
        principal,
        operationId: entry.operationId,
        params,
        status,
        requestId,
        ip: clientIp(env),
        userAgent: header.get("user-agent") ?? undefined,
        method,
        path: url.pathname,
      });
    };

    const length = Number(header.get("content-length") ?? "0");
    const bodyLimit = (deps.bodyLimits ?? DEFAULT_BODY_LIMITS)[entry.service] ?? MAX_BODY_BYTES;
    // A client's mistake, not the platform's: one info line with the route, then the 413 problem.
    const tooLarge = () => {
      deps.logger?.info(
        { route: entry.operationId, path: url.pathname, status: 413, limit: bodyLimit, requestId },
        "request body too large",
      );
      return fail(new ProblemError("payload-too-large", { detail: `The body exceeds ${mib(bodyLimit)}` }));
    };
    if (length > bodyLimit) {
      // Refused before authentication (nothing of the body is read): recorded without a principal.
      audit(undefined, 413);
      return tooLarge();
    }

    let principal: Principal | undefined;
    let sessionSecret: string | undefined;
    if (entry.access !== "public") {
      try {
        const bearer =
          bearerToken(header) ?? awsSessionToken(entry.operationId, header) ?? llmKeyToken(entry.operationId, header);
        sessionSecret = bearer ? undefined : sessionSecretOf(header);
        principal = sessionSecret
          ? await authenticateSession(
              deps.authenticator,
              sessionSecret,
              header,
              method,
              ownOrigins(url.origin, deps.publicUrl),
            )
          : await deps.authenticator.authenticate(bearer ?? "");
      } catch (err) {
        const problem =
          err instanceof ProblemError
            ? err
            : new ProblemError("service-unavailable", {
                detail: "Authentication failed; retry later",
                headers: { "retry-after": String(AUTH_RETRY_AFTER_SECONDS) },
              });
        if (!(err instanceof ProblemError)) deps.logger?.error({ err, requestId }, "authentication error");
        audit(undefined, problem.status);
        // MCP clients find how to authenticate from the resource metadata (MCP authorization spec).
        const mcpChallenge: Record<string, string> =
          problem.status === 401 && entry.operationId.startsWith("page:") && entry.access === "authenticated"
            ? {
                "www-authenticate": `Bearer resource_metadata="${deps.publicUrl ?? url.origin}${RESOURCE_METADATA_PATH}"`,
              }
            : {};
        return fail(problem, mcpChallenge);
      }
    }

    if (principal) annotateSpan({ "agentplane.principal.type": principal.type });
    // A scoped API token reaches only the routes of the permissions it names (`authenticated`
    // routes included: a token for model calls does not read the account either).
    if (principal?.scopes && !principal.scopes.includes(entry.access)) {
      audit(principal, 403);
      return fail(
        new ProblemError("forbidden", {
          detail: `This token is restricted to ${principal.scopes.join(", ")}; this route needs ${entry.access === "authenticated" ? "an unrestricted token" : entry.access}`,
        }),
      );
    }

    // Text no service can store (malformed escapes, NUL, lone surrogates) is refused here, once,
    // with the field named; a caller without a valid token got its 401 above.
    const invalid = [...(match.invalid ?? []), ...invalidQuery(url.search)];
    if (invalid.length > 0) {
      audit(principal, 400);
      return fail(new ProblemError("validation-failed", { detail: "The request is not valid", errors: invalid }));
    }

    const limitKey = principal ? `p:${principal.id}` : `ip:${clientIp(env) ?? "unknown"}`;
    const limit: RateLimitResult = await deps.rateLimiter.hit(limitKey);
    const limitHeaders = rateLimitHeaders(deps.rateLimit, limit);
    if (!limit.allowed) {
      audit(principal, 429);
      return fail(
        new ProblemError("rate-limited", {
          detail: `More than ${limit.limit} requests in ${deps.rateLimit.windowSeconds} s for this token`,
        }),
        { ...limitHeaders, "retry-after": String(limit.resetSeconds) },
      );
    }

    const target = deps.targets[entry.service];
    if (!target) {
      audit(principal, 503);
      return fail(
        new ProblemError("service-unavailable", {
          detail: `The ${entry.service} service is not part of this deployment`,
        }),
      );
    }
    const identity = principal ? await signer.sign(principal, entry.service) : undefined;
    let response: Response;
    const headers = forwardHeaders(allHeaders, identity, requestId, url);
    // Services never see the session cookie, but for the one page that checks it (and its CSRF
    // token) itself: the sign-in device flow's approval page.
    if (!entry.sessionCookie) stripSessionCookie(headers);
    if (AWS_PROXY_OPERATION.test(entry.operationId)) awsProxyHeaders(header, headers);
    if (LLM_OPERATION.test(entry.operationId)) for (const name of LLM_KEY_HEADERS) delete headers[name];
    let bytes: Uint8Array | undefined;
    try {
      bytes = await readSmallBody(method, header, env?.incoming);
    } catch (err) {
      if (!(err instanceof IncompleteBodyError)) throw err;
      audit(principal, 400);
      return fail(new ProblemError("bad-request", { detail: "The body ended before the length it declared" }));
    }
    const forwarded = forwardRequest(request, url, headers, bodyLimit, bytes);
    // Over HTTP, the gateway's headers go into the answer's header record before its Response is
    // built (nothing copied afterwards); the organization the service named is taken out first.
    let named: string | undefined;
    const adjust = (answer: ResponseHeaders) => {
      const org = answer[RESOURCE_ORG_HEADER];
      if (org !== undefined) {
        named = Array.isArray(org) ? org[0] : org;
        delete answer[RESOURCE_ORG_HEADER];
      }
      answer[REQUEST_ID_HEADER] = requestId;
      Object.assign(answer, limitHeaders);
    };
    const send = (target.fetch as Partial<HttpServiceFetch>).send;
    try {
      response = await (send
        ? send(forwarded.request, adjust)
        : target.fetch(
            forwarded.request.body instanceof Uint8Array || !forwarded.request.body
              ? inProcessRequest(url.origin, forwarded.request as OutgoingRequest & { body?: Uint8Array | null })
              : toRequest(url.origin, forwarded.request),
          ));
    } catch (err) {
      if (forwarded.overLimit() || err instanceof BodyTooLargeError) {
        audit(principal, 413);
        return tooLarge();
      }
      deps.logger?.error({ err: (err as Error).message, service: entry.service, requestId }, "dispatch failed");
      audit(principal, 502);
      return fail(new ProblemError("bad-gateway", { detail: `The ${entry.service} service did not answer` }));
    }
    if (sessionSecret && entry.operationId === "deleteCurrentSession" && response.status === 204) {
      deps.authenticator.forgetSession(sessionSecret);
    }
    if (forwarded.overLimit()) {
      // The service saw a body cut short; what the caller must hear is that it was too large.
      await response.body?.cancel().catch(() => {});
      audit(principal, 413);
      return tooLarge();
    }
    // In process, the same adjustment is made to the answer's own header record where it can be;
    // not for a 201, whose body the audit record reads through a clone (a clone of a lightweight
    // Response is built from the headers it was created with).
    const adjusted = send !== undefined || (response.status !== 201 && adjustResponseHeaders(response, adjust));
    // With its headers adjusted, the answer has nothing more the record needs (but a 201's body):
    // the record is made once the answer is on its way.
    if (adjusted && response.status !== 201) audit(principal, response.status, undefined, named, true);
    else audit(principal, response.status, response, named);
    return adjusted ? response : withHeaders(response, { [REQUEST_ID_HEADER]: requestId, ...limitHeaders });
  }

  const handleUpgrade = createUpgradeHandler({
    routes,
    targets: deps.targets,
    authenticator: deps.authenticator,
    signer,
    ...(deps.logger ? { logger: deps.logger } : {}),
    ...(deps.ingress ? { ingress: deps.ingress } : {}),
    ...(deps.publicUrl ? { publicUrl: deps.publicUrl } : {}),
  });

  return {
    async fetch(request, env) {
      try {
        return await handle(request, env);
      } catch (err) {
        deps.logger?.error({ err }, "gateway error");
        return new Response(JSON.stringify(new ProblemError("internal-error").toBody()), {
          status: 500,
          headers: { "content-type": PROBLEM_CONTENT_TYPE },
        });
      }
    },
    handleUpgrade,
    routes,
    agent,
    close: () => auditor.close(),
  };
}

/**
 * The AWS proxy routes (`/v1/aws-connections/{connectionId}/aws/{path}`) are called by unchanged
 * AWS SDKs and the CLI: their Authorization header is a SigV4 signature made with access key
 * `agentplane`, and the Agentplane token travels as the session token. On these routes only, the
 * token is taken from `X-Amz-Security-Token`; the SigV4 header (no secret in it) reaches
 * connections-svc as `x-agentplane-aws-authorization` for its credential scope, the token does not.
 */
const AWS_PROXY_OPERATION = /^awsProxy/;

function awsSessionToken(operationId: string, headers: HeaderReader): string | undefined {
  if (!AWS_PROXY_OPERATION.test(operationId)) return undefined;
  return headers.get("x-amz-security-token") ?? undefined;
}

/**
 * The model pass-through routes (`/v1/llm/**`, `/v1/projects/{projectId}/llm/**`) are called by
 * unchanged provider SDKs, which send their key in their own header: Anthropic's as `x-api-key`,
 * Azure OpenAI's (and Foundry's OpenAI-style API) as `api-key`. On these routes only, an Agentplane
 * token is taken from those headers when no bearer token came, and neither header goes past the
 * gateway (the proxy adds the provider's own key).
 */
const LLM_OPERATION = /^(?:post|get)Llm/;
const LLM_KEY_HEADERS = ["x-api-key", "api-key"] as const;

function llmKeyToken(operationId: string, headers: HeaderReader): string | undefined {
  if (!LLM_OPERATION.test(operationId)) return undefined;
  for (const name of LLM_KEY_HEADERS) {
    const value = headers.get(name)?.trim();
    if (value) return value;
  }
  return undefined;
}

function awsProxyHeaders(incoming: HeaderReader, outgoing: Record<string, string>): void {
  delete outgoing["x-amz-security-token"];
  const auth = incoming.get("authorization");
  if (auth?.startsWith("AWS4-HMAC-SHA256 ")) outgoing["x-agentplane-aws-authorization"] = auth;
}
