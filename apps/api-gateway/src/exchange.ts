import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { OAUTH_ERROR_HEADER, type Principal, REQUEST_ID_HEADER, RESOURCE_ORG_HEADER } from "@agentplane/contracts";
import { type FieldError, ProblemError, problemResponse } from "@agentplane/problem-details";
import type { IdentitySigner } from "@agentplane/service-kit";
import type { AgentFront } from "./agent-front.ts";
import { isRoutineAnswer, type RequestAuditor, shouldAudit } from "./audit.ts";
import type { ClientAddresses } from "./client-address.ts";
import type { GatewayDeps } from "./deps.ts";
import type { FailedAuthentications } from "./failed-authentications.ts";
import { type HeaderReader, requestHeaders } from "./forward.ts";
import { responseHeader } from "./response-headers.ts";
import type { RouteEntry, RouteTable } from "./route-table.ts";

/** The gateway's parts every stage of a request reads, built once by `createGateway`. */
export interface GatewayCore {
  deps: GatewayDeps;
  routes: RouteTable;
  signer: IdentitySigner;
  auditor: RequestAuditor;
  agent: AgentFront;
  /** Where a request came from (TRUSTED_PROXIES decides whether X-Forwarded-For counts). */
  clientAddresses: ClientAddresses;
  /** Refused credentials per address: past the budget, credentials are not even looked up. */
  failedAuthentications: FailedAuthentications;
  /** The OpenAPI document as served (built on first use). */
  openapi(): string;
  health(kind: "live" | "ready" | "summary"): Promise<Response>;
}

export type GatewayEnv = { incoming?: IncomingMessage } | undefined;

/** One request as the stages see it, from the moment it arrived. */
export interface Exchange {
  request: Request;
  env: GatewayEnv;
  url: URL;
  method: string;
  header: HeaderReader;
  allHeaders: Headers | IncomingHttpHeaders;
  requestId: string;
}

/** A request matched to a service's route, on its way there; the admission stages fill it in. */
export interface Routed extends Exchange {
  entry: RouteEntry;
  params: Record<string, string>;
  /** Text of the path no service can store, found when the route was matched. */
  invalidPath: FieldError[] | undefined;
  /** The largest body this route's service takes. */
  bodyLimit: number;
  principal?: Principal;
  /** The browser session's secret when the caller came with the session cookie. */
  sessionSecret?: string;
  /** The rate limit's headers, added to the answer. */
  limitHeaders: Record<string, string>;
}

/** The first stage: the request's URL, headers and id (the caller's when it is sane). */
export function begin(request: Request, env: GatewayEnv): Exchange {
  const url = new URL(request.url);
  const { reader: header, all: allHeaders } = requestHeaders(request, env?.incoming);
  const incomingId = header.get(REQUEST_ID_HEADER);
  const requestId = incomingId && /^[\w.:-]{1,128}$/.test(incomingId) ? incomingId : randomUUID();
  return { request, env, url, method: request.method.toUpperCase(), header, allHeaders, requestId };
}

export function clientIp(core: GatewayCore, env: GatewayEnv): string | undefined {
  return core.clientAddresses.of(env?.incoming);
}

/** The problem answer, with the request id and any `extra` headers. */
export function fail(ex: Exchange, error: ProblemError, extra: Record<string, string> = {}): Response {
  return withHeaders(problemResponse(error, { instance: ex.url.pathname, requestId: ex.requestId }), {
    [REQUEST_ID_HEADER]: ex.requestId,
    ...extra,
  });
}

/** What the service's answer told the gateway, for its audit record. */
export interface ServiceAnswer {
  /** The answer itself, when its headers were not taken out already (or its body is needed). */
  response?: Response | undefined;
  /** The organization the service named (its resource-org header), already taken out. */
  resourceOrg?: string | undefined;
  /** The OAuth error code the service named (its oauth-error header), already taken out. */
  oauthError?: string | undefined;
  /** Record once the answer is on its way (it needs nothing more from the answer). */
  soon?: boolean;
}

/** Records the request in the audit trail when its method and status are recorded at all. */
export function audit(core: GatewayCore, r: Routed, status: number, answer: ServiceAnswer = {}): void {
  if (!shouldAudit(r.method, status)) return;
  const { response, resourceOrg } = answer;
  const routine = isRoutineAnswer(r.entry.operationId, status, {
    credentials: () =>
      r.principal !== undefined || r.sessionSecret !== undefined || r.header.get("authorization") !== null,
    oauthError: () => answer.oauthError ?? (response ? responseHeader(response, OAUTH_ERROR_HEADER) : undefined),
  });
  if (routine) return;
  const { auditor } = core;
  (answer.soon ? auditor.recordSoon : auditor.record).call(auditor, {
    response,
    resourceOrg,
    principal: r.principal,
    operationId: r.entry.operationId,
    params: r.params,
    status,
    requestId: r.requestId,
    ip: clientIp(core, r.env),
    userAgent: r.header.get("user-agent") ?? undefined,
    method: r.method,
    path: r.url.pathname,
  });
}

/** Headers of a service's answer meant for the gateway only. */
const GATEWAY_ONLY_HEADERS = [RESOURCE_ORG_HEADER, OAUTH_ERROR_HEADER] as const;

export function withHeaders(response: Response, headers: Record<string, string>): Response {
  // Responses from in-process apps may have immutable headers; copy when needed. What a service
  // named for the audit record (an organization, an OAuth error code) stays inside.
  try {
    for (const [k, v] of Object.entries(headers)) response.headers.set(k, v);
    for (const name of GATEWAY_ONLY_HEADERS) response.headers.delete(name);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    for (const [k, v] of Object.entries(headers)) copy.headers.set(k, v);
    for (const name of GATEWAY_ONLY_HEADERS) copy.headers.delete(name);
    return copy;
  }
}

const mib = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;

/** A client's mistake, not the platform's: one info line with the route, then the 413 problem. */
export function tooLarge(core: GatewayCore, r: Routed): Response {
  core.deps.logger?.info(
    { route: r.entry.operationId, path: r.url.pathname, status: 413, limit: r.bodyLimit, requestId: r.requestId },
    "request body too large",
  );
  return fail(r, new ProblemError("payload-too-large", { detail: `The body exceeds ${mib(r.bodyLimit)}` }));
}
