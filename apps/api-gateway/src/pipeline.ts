import { buildOpenApiDocument, PAGE_SECURITY_HEADERS, type Principal } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { MAX_BODY_BYTES } from "@agentplane/service-kit";
import { nameRequestSpan } from "@agentplane/telemetry";
import { admit, protectedResourceOf } from "./admission.ts";
import { AGENT_PREFIX } from "./agent-front.ts";
import { agentRequest } from "./agent-request.ts";
import { bearerToken } from "./authn/authenticator.ts";
import { DEFAULT_BODY_LIMITS } from "./deps.ts";
import { dispatch } from "./dispatch-stage.ts";
import { docsPage, docsPolicy, referenceBundle } from "./docs.ts";
import { begin, clientIp, type Exchange, fail, type GatewayCore, type GatewayEnv, type Routed } from "./exchange.ts";
import { addressLimitKey } from "./rate-limit.ts";

/**
 * One request through the gateway, stage by stage: a sandbox's host (ingress), the gateway's own
 * pages (health, OpenAPI, docs, resource metadata), the agent runtime under /agent, then a route
 * of the table: matched, admitted (size, credentials, scope, text, rate limit) and dispatched.
 */
export function handleRequest(core: GatewayCore, request: Request, env: GatewayEnv): Response | Promise<Response> {
  const ex = begin(request, env);
  const ingress = core.deps.ingress;
  const ingressTarget = ingress?.parse(ex.header.get("host") ?? ex.url.host);
  if (ingressTarget && ingress) return toSandboxIngress(core, ex, ingressTarget);

  const page = gatewayPage(core, ex);
  if (page) return page;

  const { pathname } = ex.url;
  if (pathname === AGENT_PREFIX || pathname.startsWith(`${AGENT_PREFIX}/`)) {
    return agentRequest(
      { agent: core.agent, deps: core.deps, auditor: core.auditor, fail: (error, extra) => fail(ex, error, extra) },
      { request, url: ex.url, method: ex.method, header: ex.header, requestId: ex.requestId, ip: clientIp(core, env) },
    );
  }

  // Each stage answers at once when it can: a request that goes on awaits only what it waits for
  // (its credentials, the rate limit, the service), with no promise of a stage's own in between.
  const routed = route(core, ex);
  if (!isRouted(routed)) return routed;
  const refused = admit(core, routed);
  if (refused === undefined) return dispatch(core, routed);
  if (refused instanceof Response) return refused;
  return refused.then((answer) => answer ?? dispatch(core, routed));
}

function isRouted(value: Routed | Response | Promise<Response>): value is Routed {
  return !(value instanceof Response) && !(value instanceof Promise);
}

/**
 * A request for an exposed sandbox port (its Host names it): an optional bearer token, then on. A
 * refused token counts toward the address's budget of refusals, and a spent budget is refused
 * before any lookup, as on any route.
 */
async function toSandboxIngress(
  core: GatewayCore,
  ex: Exchange,
  target: { slug: string; port?: number },
): Promise<Response> {
  let principal: Principal | undefined;
  const token = bearerToken(ex.header);
  if (token) {
    try {
      principal = await core.failedAuthentications.guard(
        addressLimitKey(clientIp(core, ex.env)),
        () => core.deps.authenticator.authenticate(token),
        (failure) =>
          core.deps.logger?.warn({ err: failure, requestId: ex.requestId }, "failed authentication not counted"),
      );
    } catch (err) {
      if (err instanceof ProblemError) return fail(ex, err);
      throw err;
    }
  }
  return (core.deps.ingress as NonNullable<typeof core.deps.ingress>).fetch(ex.request, {
    ...target,
    requestId: ex.requestId,
    ...(principal ? { principal } : {}),
  });
}

const HEALTH_PATHS = { "/health": "summary", "/health/live": "live", "/health/ready": "ready" } as const;

/** The gateway's own answers: health, the API's index, its OpenAPI document and reference, resource metadata. */
function gatewayPage(core: GatewayCore, ex: Exchange): Response | Promise<Response> | undefined {
  const { url, method } = ex;
  const healthKind = HEALTH_PATHS[url.pathname as keyof typeof HEALTH_PATHS];
  if (healthKind && (method === "GET" || method === "HEAD")) return core.health(healthKind);
  if (method !== "GET") return undefined;
  if (url.pathname === "/v1" || url.pathname === "/v1/") {
    // The address the start banner gives for the API: where its description and reference are.
    const base = core.deps.publicUrl ?? url.origin;
    return new Response(
      JSON.stringify({
        name: "Agentplane API",
        version: "v1",
        openapi: `${base}/v1/openapi.json`,
        reference: `${base}/docs`,
        console: `${base}/`,
        health: `${base}/health`,
      }),
      { headers: { "content-type": "application/json" } },
    );
  }
  if (url.pathname === "/v1/openapi.json") {
    return new Response(core.openapi(), { headers: { "content-type": "application/json" } });
  }
  if (url.pathname === "/docs" || url.pathname === "/docs/") {
    const html = docsPage("/v1/openapi.json", "/docs/reference.js");
    return new Response(html, {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": docsPolicy(html),
        ...PAGE_SECURITY_HEADERS,
      },
    });
  }
  if (url.pathname === "/docs/reference.js") {
    return referenceBundle().then(
      (bundle) =>
        new Response(new Uint8Array(bundle), {
          headers: {
            "content-type": "text/javascript; charset=utf-8",
            "cache-control": "public, max-age=86400",
            ...PAGE_SECURITY_HEADERS,
          },
        }),
    );
  }
  const resource = protectedResourceOf(url.pathname);
  if (resource !== undefined) {
    // OAuth protected-resource metadata (RFC 9728) for MCP clients: Bearer tokens in the header.
    const base = core.deps.publicUrl ?? url.origin;
    return new Response(
      JSON.stringify({
        resource: `${base}${resource}`,
        bearer_methods_supported: ["header"],
        resource_name: "Agentplane",
      }),
      { headers: { "content-type": "application/json" } },
    );
  }
  return undefined;
}

/** The route of the table the request is for; else a console page, a 404, a 405 or a 426. */
function route(core: GatewayCore, ex: Exchange): Routed | Response | Promise<Response> {
  const { url, method } = ex;
  const match = core.routes.match(method, url.pathname);
  if (match.kind === "not-found") return notFound(core, ex);
  if (match.kind === "method-not-allowed") {
    return fail(ex, new ProblemError("method-not-allowed", { detail: `${method} is not allowed on ${url.pathname}` }), {
      allow: match.allow.join(", "),
    });
  }
  const { entry, params } = match;
  nameRequestSpan(method, entry.template);
  if (entry.websocket) {
    // A WebSocket endpoint reached by plain HTTP (RFC 9110 §15.5.22).
    return fail(
      ex,
      new ProblemError("upgrade-required", {
        detail: `${url.pathname} is a WebSocket endpoint: send the request with Upgrade: websocket`,
      }),
      { upgrade: "websocket", connection: "Upgrade" },
    );
  }
  const bodyLimit = (core.deps.bodyLimits ?? DEFAULT_BODY_LIMITS)[entry.service] ?? MAX_BODY_BYTES;
  return { ...ex, entry, params, invalidPath: match.invalid, bodyLimit, limitHeaders: NO_HEADERS };
}

/** Set by the rate limit's stage; until then (and for a refused request) the answer has none of them. */
const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** No route of the table: a console page, else the 404. */
async function notFound(core: GatewayCore, ex: Exchange): Promise<Response> {
  const { url, method, header } = ex;
  const page = core.deps.console && (await core.deps.console.serve(method, url.pathname, header));
  if (page) return page;
  return fail(ex, new ProblemError("not-found", { detail: `No route for ${url.pathname}` }));
}

/** The OpenAPI document as the gateway serves it (its server URL the public one when known). */
export function openApiDocument(publicUrl: string | undefined): string {
  return JSON.stringify(buildOpenApiDocument(publicUrl ? { serverUrl: publicUrl } : {}));
}
