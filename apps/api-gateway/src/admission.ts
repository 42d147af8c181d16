import { type Principal, secureSessionCookie } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { annotateSpan } from "@agentplane/telemetry";
import { AUTH_RETRY_AFTER_SECONDS, bearerToken } from "./authn/authenticator.ts";
import { authenticateSession, ownOrigins, sessionSecretOf } from "./authn/session.ts";
import { audit, clientIp, fail, type GatewayCore, type Routed, tooLarge } from "./exchange.ts";
import { awsSessionToken, llmKeyToken } from "./provider-credentials.ts";
import { addressLimitKey, limitPrincipal, rateLimitHeaders } from "./rate-limit.ts";
import { reachRefusal } from "./reach.ts";
import { invalidQuery } from "./route-table.ts";

/** Where MCP clients read how this resource server takes tokens (RFC 9728). */
export const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource";
/** The platform's MCP endpoints, the resources the metadata describes (`{BASE}/mcp`, a project's). */
const MCP_RESOURCE = /^\/(?:projects\/[^/]+\/)?mcp$/;

/**
 * The resource path whose metadata (RFC 9728 §3.1) a request path asks for: the root's for the
 * well-known path itself, an MCP endpoint's for the well-known path followed by that endpoint's
 * path; undefined for any other path.
 */
export function protectedResourceOf(pathname: string): string | undefined {
  if (pathname === RESOURCE_METADATA_PATH) return "";
  if (!pathname.startsWith(`${RESOURCE_METADATA_PATH}/`)) return undefined;
  const resource = pathname.slice(RESOURCE_METADATA_PATH.length);
  return MCP_RESOURCE.test(resource) ? resource : undefined;
}

/**
 * Whether a routed request goes on to its service, stage by stage: the declared body size, the
 * caller's credentials, a scoped token's reach, the text of the path and query, the rate limit.
 * Undefined when it goes on (`r` then carries the principal and the rate limit's headers); else
 * the problem answer, recorded. A stage that waits for nothing answers at once.
 */
export function admit(core: GatewayCore, r: Routed): Response | undefined | Promise<Response | undefined> {
  const refused = refuseDeclaredSize(core, r);
  if (refused) return refused;
  if (r.entry.access === "public") return afterAuthentication(core, r);
  return authenticate(core, r).then((denied) => denied ?? afterAuthentication(core, r));
}

function afterAuthentication(core: GatewayCore, r: Routed): Response | Promise<Response | undefined> | undefined {
  return checkReach(core, r) ?? checkText(core, r) ?? applyRateLimit(core, r);
}

function checkReach(core: GatewayCore, r: Routed): Response | undefined {
  const refused = reachRefusal(r.principal, r.entry, r.params);
  if (!refused) return undefined;
  audit(core, r, 403);
  return fail(r, refused);
}

/** Refused before authentication (nothing of the body is read): recorded without a principal. */
function refuseDeclaredSize(core: GatewayCore, r: Routed): Response | undefined {
  const length = Number(r.header.get("content-length") ?? "0");
  if (length <= r.bodyLimit) return undefined;
  audit(core, r, 413);
  return tooLarge(core, r);
}

/** The bearer token (or a provider SDK's header on its routes), else the browser session. */
function authenticate(core: GatewayCore, r: Routed): Promise<Response | undefined> {
  const { deps } = core;
  const { entry, header } = r;
  let principal: Promise<Principal | undefined>;
  let bearer: string | undefined;
  let sessionSecret: string | undefined;
  try {
    bearer =
      bearerToken(header) ?? awsSessionToken(entry.operationId, header) ?? llmKeyToken(entry.operationId, header);
    const secure = secureSessionCookie(r.url.protocol.slice(0, -1), deps.publicUrl);
    sessionSecret = bearer ? undefined : sessionSecretOf(header, secure);
    if (sessionSecret) r.sessionSecret = sessionSecret;
    if (bearer || sessionSecret) {
      const refused = refuseBlockedAddress(core, r);
      if (refused) return Promise.resolve(refused);
    }
    principal = sessionSecret
      ? authenticateSession(
          deps.authenticator,
          sessionSecret,
          header,
          r.method,
          ownOrigins(r.url.origin, deps.publicUrl),
        )
      : deps.authenticator.authenticate(bearer ?? "");
  } catch (err) {
    return Promise.resolve(refuseCredentials(core, r, err));
  }
  return principal.then(
    (found) => {
      if (!found) return undefined;
      r.principal = found;
      annotateSpan({ "agentplane.principal.type": found.type });
      return undefined;
    },
    (err: unknown) => {
      if (bearer || sessionSecret) {
        core.failedAuthentications.countIfRefused(addressLimitKey(clientIp(core, r.env)), err, (failure) => {
          deps.logger?.warn({ err: failure, requestId: r.requestId }, "failed authentication not counted");
        });
      }
      return refuseCredentials(core, r, err);
    },
  );
}

/** An address that has spent its budget of refused credentials: 429 before any lookup. */
function refuseBlockedAddress(core: GatewayCore, r: Routed): Response | undefined {
  const problem = core.failedAuthentications.refusal(addressLimitKey(clientIp(core, r.env)));
  if (!problem) return undefined;
  audit(core, r, 429);
  return fail(r, problem);
}

/** The answer to credentials that were refused (or could not be checked), recorded. */
function refuseCredentials(core: GatewayCore, r: Routed, err: unknown): Response {
  const { deps } = core;
  const { entry } = r;
  const problem =
    err instanceof ProblemError
      ? err
      : new ProblemError("service-unavailable", {
          detail: "Authentication failed; retry later",
          headers: { "retry-after": String(AUTH_RETRY_AFTER_SECONDS) },
        });
  if (!(err instanceof ProblemError)) deps.logger?.error({ err, requestId: r.requestId }, "authentication error");
  audit(core, r, problem.status);
  // MCP clients find how to authenticate from the resource metadata (MCP authorization spec).
  const mcpChallenge: Record<string, string> =
    problem.status === 401 && entry.operationId.startsWith("page:") && entry.access === "authenticated"
      ? {
          "www-authenticate": `Bearer resource_metadata="${deps.publicUrl ?? r.url.origin}${RESOURCE_METADATA_PATH}${r.url.pathname}"`,
        }
      : {};
  return fail(r, problem, mcpChallenge);
}

/**
 * Text no service can store (malformed escapes, NUL, lone surrogates) is refused here, once, with
 * the field named; a caller without a valid token got its 401 before.
 */
function checkText(core: GatewayCore, r: Routed): Response | undefined {
  const fromQuery = r.url.search ? invalidQuery(r.url.search) : [];
  if (!r.invalidPath?.length && fromQuery.length === 0) return undefined;
  const invalid = [...(r.invalidPath ?? []), ...fromQuery];
  audit(core, r, 400);
  return fail(r, new ProblemError("validation-failed", { detail: "The request is not valid", errors: invalid }));
}

/**
 * Per principal and per its user (all of a user's tokens and sessions together), or per address
 * for a public route called without credentials.
 */
function applyRateLimit(core: GatewayCore, r: Routed): Promise<Response | undefined> {
  const { deps } = core;
  if (r.principal) {
    return limitPrincipal(deps, r.principal).then(({ headers, refused }) => {
      r.limitHeaders = headers;
      if (!refused) return undefined;
      audit(core, r, 429);
      return fail(r, refused);
    });
  }
  return deps.rateLimiter.hit(addressLimitKey(clientIp(core, r.env))).then((limit) => {
    r.limitHeaders = rateLimitHeaders(deps.rateLimit, limit);
    if (limit.allowed) return undefined;
    audit(core, r, 429);
    return fail(
      r,
      new ProblemError("rate-limited", {
        detail: `More than ${limit.limit} requests in ${deps.rateLimit.windowSeconds} s from this address`,
      }),
      { ...r.limitHeaders, "retry-after": String(limit.resetSeconds) },
    );
  });
}
