import { OAUTH_ERROR_HEADER, REQUEST_ID_HEADER, RESOURCE_ORG_HEADER } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { HttpServiceFetch, OutgoingRequest, ResponseHeaders } from "@agentplane/service-kit";
import { stripSessionCookie } from "./authn/session.ts";
import { audit, fail, type GatewayCore, type Routed, tooLarge, withHeaders } from "./exchange.ts";
import {
  BodyTooLargeError,
  forwardHeaders,
  forwardRequest,
  IncompleteBodyError,
  readSmallBody,
  toRequest,
} from "./forward.ts";
import { inProcessRequest } from "./in-process-request.ts";
import { AWS_PROXY_OPERATION, awsProxyHeaders, LLM_KEY_HEADERS, LLM_OPERATION } from "./provider-credentials.ts";
import { API_CACHE_CONTROL, adjustResponseHeaders } from "./response-headers.ts";
import { forgetRevoked } from "./revocations.ts";

type ForwardedRequest = ReturnType<typeof forwardRequest>;

/**
 * The last stage of an admitted request: to its service (in process or over HTTP) with the
 * caller's signed identity, and the answer back with the gateway's headers and its audit record.
 */
export async function dispatch(core: GatewayCore, r: Routed): Promise<Response> {
  const target = core.deps.targets[r.entry.service];
  if (!target) {
    audit(core, r, 503);
    return fail(
      r,
      new ProblemError("service-unavailable", {
        detail: `The ${r.entry.service} service is not part of this deployment`,
      }),
    );
  }
  const forwarded = await outgoing(core, r);
  if (forwarded instanceof Response) return forwarded;

  // Over HTTP, the gateway's headers go into the answer's header record before its Response is
  // built (nothing copied afterwards); what the service named for the audit record (the
  // organization, an OAuth error code) is taken out first.
  let named: string | undefined;
  let oauthError: string | undefined;
  const adjust = (answer: ResponseHeaders) => {
    named = takeHeader(answer, RESOURCE_ORG_HEADER);
    oauthError = takeHeader(answer, OAUTH_ERROR_HEADER);
    answer[REQUEST_ID_HEADER] = r.requestId;
    Object.assign(answer, r.limitHeaders);
    answer["cache-control"] ??= API_CACHE_CONTROL;
    answer["x-content-type-options"] = "nosniff";
  };
  const send = (target.fetch as Partial<HttpServiceFetch>).send;
  let response: Response;
  try {
    response = await (send ? send(forwarded.request, adjust) : target.fetch(inProcess(r, forwarded)));
  } catch (err) {
    if (forwarded.overLimit() || err instanceof BodyTooLargeError) {
      audit(core, r, 413);
      return tooLarge(core, r);
    }
    core.deps.logger?.error(
      { err: (err as Error).message, service: r.entry.service, requestId: r.requestId },
      "dispatch failed",
    );
    audit(core, r, 502);
    return fail(r, new ProblemError("bad-gateway", { detail: `The ${r.entry.service} service did not answer` }));
  }
  if (r.sessionSecret && r.entry.operationId === "deleteCurrentSession" && response.status === 204) {
    core.deps.authenticator.forgetSession(r.sessionSecret, r.principal?.sessionId);
  }
  forgetRevoked(core.deps.authenticator, r.entry.operationId, r.params, response.status);
  if (forwarded.overLimit()) {
    // The service saw a body cut short; what the caller must hear is that it was too large.
    await response.body?.cancel().catch(() => {});
    audit(core, r, 413);
    return tooLarge(core, r);
  }
  // In process, the same adjustment is made to the answer's own header record where it can be;
  // not for a 201, whose body the audit record reads through a clone (a clone of a lightweight
  // Response is built from the headers it was created with).
  const adjusted = send !== undefined || (response.status !== 201 && adjustResponseHeaders(response, adjust));
  // With its headers adjusted, the answer has nothing more the record needs (but a 201's body):
  // the record is made once the answer is on its way.
  if (adjusted && response.status !== 201) {
    audit(core, r, response.status, { resourceOrg: named, oauthError, soon: true });
  } else audit(core, r, response.status, { response, resourceOrg: named, oauthError });
  if (adjusted) return response;
  return withHeaders(response, {
    [REQUEST_ID_HEADER]: r.requestId,
    ...r.limitHeaders,
    "cache-control": response.headers.get("cache-control") ?? API_CACHE_CONTROL,
    "x-content-type-options": "nosniff",
  });
}

/** Removes one header from an answer's record, returning its (first) value. */
function takeHeader(answer: ResponseHeaders, name: string): string | undefined {
  const value = answer[name];
  if (value === undefined) return undefined;
  delete answer[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The request as the service gets it: the signed identity, the headers it may see, the body. */
async function outgoing(core: GatewayCore, r: Routed): Promise<ForwardedRequest | Response> {
  const { entry, header } = r;
  const identity = r.principal ? await core.signer.sign(r.principal, entry.service) : undefined;
  const headers = forwardHeaders(r.allHeaders, identity, r.requestId, r.url);
  // Services never see the session cookie, but for the one page that checks it itself (the device
  // approval page, with its CSRF form).
  if (!entry.sessionCookie) stripSessionCookie(headers);
  if (AWS_PROXY_OPERATION.test(entry.operationId)) awsProxyHeaders(header, headers);
  if (LLM_OPERATION.test(entry.operationId)) for (const name of LLM_KEY_HEADERS) delete headers[name];
  let bytes: Uint8Array | undefined;
  try {
    bytes = await readSmallBody(r.method, header, r.env?.incoming);
  } catch (err) {
    if (!(err instanceof IncompleteBodyError)) throw err;
    audit(core, r, 400);
    return fail(r, new ProblemError("bad-request", { detail: "The body ended before the length it declared" }));
  }
  return forwardRequest(r.request, r.url, headers, r.bodyLimit, bytes);
}

/** For a service in process: its own lightweight request when the body is at hand, else a web Request. */
function inProcess(r: Routed, forwarded: ForwardedRequest): Request {
  const request = forwarded.request;
  return request.body instanceof Uint8Array || !request.body
    ? inProcessRequest(r.url.origin, request as OutgoingRequest & { body?: Uint8Array | null })
    : toRequest(r.url.origin, request);
}
