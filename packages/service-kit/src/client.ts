import { INTERNAL_IDENTITY_HEADER, type Principal, REQUEST_ID_HEADER } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { injectTraceparent } from "@agentplane/telemetry";
import { Agent } from "undici";
import { type DispatchOptions, dispatchRequest } from "./dispatch.ts";
import { IdentitySigner, type InternalKeys } from "./identity.ts";

/** A `fetch` for one service: in process (`app.fetch`) in all-in-one mode, HTTP keep-alive otherwise. */
export type ServiceFetch = (request: Request) => Promise<Response>;

export function inProcessFetch(app: { fetch: (request: Request) => Response | Promise<Response> }): ServiceFetch {
  return async (request) => app.fetch(request);
}

const agents = new Map<string, Agent>();

/** One signer (and so one cache of signed identities) per key pair, shared by its clients. */
const signers = new WeakMap<InternalKeys, IdentitySigner>();
function signerFor(keys: InternalKeys): IdentitySigner {
  let signer = signers.get(keys);
  if (!signer) {
    signer = new IdentitySigner(keys);
    signers.set(keys, signer);
  }
  return signer;
}

/** Set by the connection itself (Host is the service's; the caller's travels as x-forwarded-host). */
const NOT_FORWARDED = new Set(["host", "connection", "keep-alive", "transfer-encoding", "upgrade", "expect"]);

/** Statuses whose response has no body (RFC 9110): a Response must be built with `null`. */
export const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 204, 205, 304]);

/** A request as a proxy forwards it, without a web `Request` built for it. */
export interface OutgoingRequest {
  method: string;
  /** Path and query string; the origin is the service's. */
  path: string;
  /** Lower-case names; connection-level headers are left out here. */
  headers: Record<string, string>;
  body?: ReadableStream<Uint8Array> | Uint8Array | string | null;
  signal?: AbortSignal;
}

/**
 * The answer's headers as `send` received them (lower-case names; a repeated header as an array),
 * for a caller to read, remove and add to before the `Response` is built.
 */
export type ResponseHeaders = Record<string, string | string[]>;

/** An HTTP service fetch, with `send` for callers that never had a web `Request` (the gateway). */
export interface HttpServiceFetch extends ServiceFetch {
  /**
   * `adjust` sees the answer's headers before the Response is built: the Response then carries a
   * plain header record, which the server writes as it is (no `Headers` built on the way).
   */
  send(request: OutgoingRequest, adjust?: (headers: ResponseHeaders) => void): Promise<Response>;
}

/** A header record as `ResponseInit` takes it: pairs when a header repeats (Set-Cookie), else the record. */
function responseHeaders(headers: ResponseHeaders): Record<string, string> | [string, string][] {
  let repeated = false;
  for (const key in headers) {
    if (Array.isArray(headers[key])) {
      repeated = true;
      break;
    }
  }
  if (!repeated) return headers as Record<string, string>;
  const pairs: [string, string][] = [];
  for (const key in headers) {
    const value = headers[key] as string | string[];
    if (Array.isArray(value)) for (const v of value) pairs.push([key, v]);
    else pairs.push([key, value]);
  }
  return pairs;
}

/**
 * Responses declaring at most this many bytes are read whole before they are handed on: the
 * server writes headers and body in one go (one socket write, no web stream per response). Larger
 * ones, and those of unknown length (event streams, chunked), stream.
 */
export const BUFFERED_RESPONSE_BYTES = 64 * 1024;

/**
 * HTTP to `baseUrl` over a keep-alive connection pool; the request URL's origin is replaced.
 * Built on `undici.request` rather than `fetch`: the gateway's dispatch path pays for neither the
 * fetch algorithm's bookkeeping nor immutable response headers (which had to be copied to add ours).
 * Redirects are not followed; request bodies stream, response bodies too unless small (see
 * BUFFERED_RESPONSE_BYTES).
 */
export function httpFetch(baseUrl: string, options: { connections?: number } = {}): HttpServiceFetch {
  const base = new URL(baseUrl);
  const origin = base.origin;
  let agent = agents.get(origin);
  if (!agent) {
    agent = new Agent({ keepAliveTimeout: 30_000, connections: options.connections ?? 128, pipelining: 1 });
    agents.set(origin, agent);
  }
  const dispatcher = agent;
  const send = async (request: OutgoingRequest, adjust?: (headers: ResponseHeaders) => void): Promise<Response> => {
    const headers: Record<string, string> = {};
    for (const key in request.headers) {
      if (!NOT_FORWARDED.has(key)) headers[key] = request.headers[key] as string;
    }
    const res = await dispatchRequest(dispatcher, {
      origin,
      path: request.path,
      method: request.method,
      headers,
      signal: request.signal,
      // The web stream itself (async iterable): its error ends this request, never the process.
      body: (request.body ?? null) as DispatchOptions["body"],
      bufferUpTo: BUFFERED_RESPONSE_BYTES,
      bodyless: (status) => NULL_BODY_STATUSES.has(status) || request.method === "HEAD",
    });
    const out: ResponseHeaders = {};
    for (const key in res.headers) {
      const value = res.headers[key];
      if (value !== undefined) out[key] = value;
    }
    adjust?.(out);
    const init = { status: res.status, headers: responseHeaders(out) };
    return new Response(res.bytes ?? res.stream, init);
  };
  const fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, key) => {
      headers[key] = value;
    });
    const hasBody = request.method !== "GET" && request.method !== "HEAD" && request.body !== null;
    return send({
      method: request.method,
      path: url.pathname + url.search,
      headers,
      signal: request.signal,
      ...(hasBody ? { body: request.body } : {}),
    });
  };
  return Object.assign(fetch, { send });
}

/** Whether the URL parser resolves this path segment away (`.`, `..`, also percent-encoded). */
export function isDotSegment(segment: string): boolean {
  return /^(?:\.|%2e){1,2}$/i.test(segment);
}

/**
 * Paths to other services are built from ids a caller gave (`/sandboxes/${id}/stop`): an id of
 * `..` would be resolved by the URL and the call land on another route than the one meant.
 * Refused as the caller's bad request, before anything is sent.
 */
function refuseDotSegments(path: string): void {
  const end = path.search(/[?#]/);
  const segments = (end < 0 ? path : path.slice(0, end)).split("/");
  if (segments.some(isDotSegment)) {
    throw new ProblemError("bad-request", { detail: "An identifier cannot be . or .." });
  }
}

/**
 * Calls another service's JSON endpoint with a signed identity. Problems from the callee are
 * rethrown as ProblemError so they reach the caller unchanged. The identity of a principal is
 * signed once and reused while it has more than half its lifetime left (IdentitySigner), not signed
 * again per call; the request id travels as its own header.
 */
export class ServiceClient {
  readonly service: string;
  private readonly fetchImpl: ServiceFetch;
  private readonly signer: IdentitySigner;

  constructor(service: string, fetchImpl: ServiceFetch, keys: InternalKeys) {
    this.service = service;
    this.fetchImpl = fetchImpl;
    this.signer = signerFor(keys);
  }

  async request<T>(
    method: string,
    path: string,
    options: { principal: Principal; body?: unknown; requestId?: string; signal?: AbortSignal },
  ): Promise<T> {
    refuseDotSegments(path);
    const headers: Record<string, string> = {
      accept: "application/json",
      [INTERNAL_IDENTITY_HEADER]: await this.signer.sign(options.principal, this.service),
    };
    if (options.requestId) headers[REQUEST_ID_HEADER] = options.requestId;
    injectTraceparent(headers);
    let body: string | undefined;
    if (options.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.body);
    }
    // Over HTTP the request goes out as it is; only a service in process needs a web Request.
    const send = (this.fetchImpl as Partial<HttpServiceFetch>).send;
    const response = send
      ? await send({
          method,
          path,
          headers,
          ...(body ? { body } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
        })
      : await this.fetchImpl(
          new Request(`http://${this.service}.internal${path}`, {
            method,
            headers,
            ...(body ? { body } : {}),
            ...(options.signal ? { signal: options.signal } : {}),
          }),
        );
    const text = await response.text();
    const parsed = text ? (JSON.parse(text) as unknown) : undefined;
    if (!response.ok) {
      const problem = (parsed ?? {}) as { type?: string; detail?: string; title?: string };
      const slug = problem.type?.split("/").pop() ?? "internal-error";
      throw new ProblemError(slug, {
        status: response.status,
        ...(problem.title ? { title: problem.title } : {}),
        ...(problem.detail ? { detail: problem.detail } : {}),
      });
    }
    return parsed as T;
  }
}
