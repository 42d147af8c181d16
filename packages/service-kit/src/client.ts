import { INTERNAL_IDENTITY_HEADER, type Principal, REQUEST_ID_HEADER } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { Agent, fetch as undiciFetch } from "undici";
import { type InternalKeys, signIdentity } from "./identity.ts";

/** A `fetch` for one service: in process (`app.fetch`) in all-in-one mode, HTTP keep-alive otherwise. */
export type ServiceFetch = (request: Request) => Promise<Response>;

export function inProcessFetch(app: { fetch: (request: Request) => Response | Promise<Response> }): ServiceFetch {
  return async (request) => app.fetch(request);
}

const agents = new Map<string, Agent>();

/** HTTP to `baseUrl` over a keep-alive connection pool; the request URL's origin is replaced. */
export function httpFetch(baseUrl: string, options: { connections?: number } = {}): ServiceFetch {
  const base = new URL(baseUrl);
  let agent = agents.get(base.origin);
  if (!agent) {
    agent = new Agent({ keepAliveTimeout: 30_000, connections: options.connections ?? 128, pipelining: 1 });
    agents.set(base.origin, agent);
  }
  const dispatcher = agent;
  return async (request) => {
    const url = new URL(request.url);
    const target = new URL(url.pathname + url.search, base);
    const init: Record<string, unknown> = {
      method: request.method,
      headers: request.headers,
      redirect: "manual",
      dispatcher,
      signal: request.signal,
    };
    if (request.body && request.method !== "GET" && request.method !== "HEAD") {
      init.body = request.body;
      init.duplex = "half";
    }
    // undici's fetch returns its own Response class; it is the same shape as the global one.
    return (await undiciFetch(target, init as never)) as unknown as Response;
  };
}

/**
 * Calls another service's JSON endpoint with a signed identity. Problems from the callee are
 * rethrown as ProblemError so they reach the caller unchanged.
 */
export class ServiceClient {
  readonly service: string;
  private readonly fetchImpl: ServiceFetch;
  private readonly keys: InternalKeys;

  constructor(service: string, fetchImpl: ServiceFetch, keys: InternalKeys) {
    this.service = service;
    this.fetchImpl = fetchImpl;
    this.keys = keys;
  }

  async request<T>(
    method: string,
    path: string,
    options: { principal: Principal; body?: unknown; requestId?: string },
  ): Promise<T> {
    const headers = new Headers({ accept: "application/json" });
    headers.set(
      INTERNAL_IDENTITY_HEADER,
      await signIdentity(this.keys, options.principal, {
        audience: this.service,
        ...(options.requestId ? { requestId: options.requestId } : {}),
      }),
    );
    if (options.requestId) headers.set(REQUEST_ID_HEADER, options.requestId);
    let body: string | undefined;
    if (options.body !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(options.body);
    }
    const response = await this.fetchImpl(
      new Request(`http://${this.service}.internal${path}`, { method, headers, ...(body ? { body } : {}) }),
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
