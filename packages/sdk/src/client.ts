import createClient, { type Client } from "openapi-fetch";
import type { operations, paths } from "./generated/openapi.ts";
import { OPERATIONS } from "./generated/operations.ts";
import { limitBody, RequestTimeoutError, sendWithoutCrossOriginRedirects, startDeadline } from "./guard.ts";
import type { OperationSpec } from "./operation-spec.ts";
import { ProblemError } from "./problem.ts";
import { type RetryOptions, withRetries } from "./retry.ts";

/** A token, or a callback asked before every request (a credential store, a refreshing session). */
export type TokenSource = string | (() => string | undefined | Promise<string | undefined>);

export interface AgentplaneClientOptions {
  /** The installation's address, e.g. `https://agentplane.example.com` (no `/v1`). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …`; leave out for a browser session carried by a cookie. */
  token?: TokenSource;
  /** Retry policy; `false` turns retries off. */
  retry?: RetryOptions | false;
  /** The fetch to send with (defaults to the global one, in Node and in browsers). */
  fetch?: (request: Request) => Promise<Response>;
  /** Extra headers on every request (a `user-agent` from a CLI, say). */
  headers?: Record<string, string>;
  /** Fetch's credentials mode, e.g. `include` for a cookie session in a browser. */
  credentials?: "include" | "same-origin" | "omit";
  /**
   * The longest one call may take, its retries and reading its answer included; past it the call
   * rejects with RequestTimeoutError. Unset or 0: no deadline of the client's own.
   */
  timeoutMs?: number;
  /** The largest answer read, in bytes (default 64 MiB); a larger one rejects with ResponseTooLargeError. */
  maxResponseBytes?: number;
}

const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** A bearer token is visible ASCII (RFC 6750's b64token is a subset of it). */
const TOKEN_CHARACTERS = /^[\x21-\x7e]+$/;

export type OperationId = keyof operations & string;
type Op<I extends OperationId> = operations[I];
type Json<R> = R extends { content: { "application/json": infer T } } ? T : undefined;
/** The parsed 2xx answer of an operation (`undefined` for 204). */
export type ResponseOf<I extends OperationId> = Op<I>["responses"] extends infer R
  ? R extends { 200: infer A }
    ? Json<A>
    : R extends { 201: infer A }
      ? Json<A>
      : R extends { 202: infer A }
        ? Json<A>
        : undefined
  : never;
type ParamsOf<I extends OperationId, K extends "path" | "query"> = Op<I>["parameters"] extends {
  [P in K]?: infer T;
}
  ? T
  : never;
type BodyOf<I extends OperationId> = Op<I> extends { requestBody?: infer B } ? Json<NonNullable<B>> : never;
/** What `request` takes for an operation: its path parameters, query and JSON body. */
export interface RequestParams<I extends OperationId> {
  path?: ParamsOf<I, "path">;
  query?: ParamsOf<I, "query">;
  body?: BodyOf<I>;
  signal?: AbortSignal;
}
/** Operations answering a page of `items`. */
export type ListOperationId = {
  [K in OperationId]: ResponseOf<K> extends { items: unknown[] } ? K : never;
}[OperationId];
export type ItemOf<I extends ListOperationId> = ResponseOf<I> extends { items: (infer T)[] } ? T : never;

const BY_ID = new Map<string, OperationSpec>(OPERATIONS.map((op) => [op.id, op]));

/** The manifest entry of an operation, or an error naming the unknown id. */
export function operationSpec(id: string): OperationSpec {
  const spec = BY_ID.get(id);
  if (!spec) throw new Error(`unknown operation ${id}`);
  return spec;
}

/** Fills `{name}` path segments, encoded; a missing value is an error before anything is sent. */
export function expandPath(template: string, values: Record<string, unknown> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined || value === null || value === "") throw new Error(`missing path parameter ${name}`);
    return name === "path"
      ? String(value).split("/").map(encodeURIComponent).join("/")
      : encodeURIComponent(String(value));
  });
}

/** `.`, `..` and their percent-encoded forms, which a URL resolves away (WHATWG URL, path state). */
const isDotSegment = (segment: string) => /^(?:\.|%2e){1,2}$/i.test(segment);

function appendQuery(url: URL, query: Record<string, unknown> = {}): void {
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(key, String(v));
  }
}

/** The start of a body that was not what was asked for, on one line, for an error message. */
function excerpt(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(line.length > 80 ? `${line.slice(0, 80)}…` : line);
}

export interface AgentplaneClient {
  readonly baseUrl: string;
  /** The typed openapi-fetch client: `api.GET("/v1/orgs/{orgId}", { params: { path: { orgId } } })`. */
  readonly api: Client<paths>;
  /** The fetch every call goes through: auth, retries and ProblemError included. */
  readonly fetch: (request: Request) => Promise<Response>;
  /** Calls an operation by its id; resolves with the parsed answer, rejects with ProblemError. */
  request<I extends OperationId>(id: I, params?: RequestParams<I>): Promise<ResponseOf<I>>;
  /** Every item of a list operation, following `nextCursor` page after page. */
  paginate<I extends ListOperationId>(id: I, params?: RequestParams<I>): AsyncGenerator<ItemOf<I>>;
  /** A raw call (the `api` escape hatch): JSON in, JSON (or text) out, errors as ProblemError. */
  raw(
    method: string,
    path: string,
    init?: { query?: Record<string, unknown>; body?: unknown; headers?: Record<string, string> },
  ): Promise<unknown>;
  /** The bearer token the next request would carry, if any. */
  token(): Promise<string | undefined>;
}

export function createAgentplaneClient(options: AgentplaneClientOptions): AgentplaneClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const token = async () => (typeof options.token === "function" ? await options.token() : options.token);
  const retrying = options.retry === false ? send : withRetries(send, options.retry);

  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;

  const authorizedFetch = async (request: Request): Promise<Response> => {
    const bearer = await token();
    if (bearer && !request.headers.has("authorization")) {
      // fetch would refuse it with an error quoting the whole header: the token in a log.
      if (!TOKEN_CHARACTERS.test(bearer)) {
        throw new Error(
          "the token holds a character an Authorization header cannot carry (a line break, a space, a control character): check how it was set",
        );
      }
      request.headers.set("authorization", `Bearer ${bearer}`);
    }
    for (const [k, v] of Object.entries(options.headers ?? {})) {
      if (!request.headers.has(k)) request.headers.set(k, v);
    }
    // One deadline for the whole call: its retries, their waits and reading the answer.
    const deadline = options.timeoutMs ? startDeadline(options.timeoutMs) : undefined;
    const timedOut = () => (deadline?.signal.aborted ? new RequestTimeoutError(options.timeoutMs!) : undefined);
    const sent = deadline
      ? new Request(request, { signal: AbortSignal.any([request.signal, deadline.signal]) })
      : request;
    let response: Response;
    try {
      const sending = sendWithoutCrossOriginRedirects(retrying, sent);
      if (deadline) {
        // An answer that comes after the deadline is let go, its connection with it.
        sending.then(
          (late) => {
            if (deadline.signal.aborted) void late.body?.cancel().catch(() => {});
          },
          () => {},
        );
      }
      response = await (deadline ? Promise.race([sending, deadline.expired]) : sending);
      if (!response.ok) {
        const problem = ProblemError.fromResponse(response);
        throw await (deadline ? Promise.race([problem, deadline.expired]) : problem);
      }
    } catch (error) {
      throw request.signal.aborted ? error : (timedOut() ?? error);
    }
    return limitBody(response, maxBytes, () => (request.signal.aborted ? undefined : timedOut()), deadline?.expired);
  };

  const api = createClient<paths>({
    baseUrl,
    fetch: authorizedFetch,
    ...(options.credentials ? { credentials: options.credentials } : {}),
  });

  const readBody = async (response: Response, what: string): Promise<unknown> => {
    if (response.status === 204) return undefined;
    const text = await response.text();
    if (!text) return undefined;
    if (!/json/.test(response.headers.get("content-type") ?? "")) return text;
    try {
      return JSON.parse(text);
    } catch {
      throw new Error(`${what} answered ${response.status} with a body that is not valid JSON: ${excerpt(text)}`);
    }
  };

  const call = async (
    method: string,
    path: string,
    init: {
      query?: Record<string, unknown>;
      body?: unknown;
      signal?: AbortSignal;
      headers?: Record<string, string>;
    } = {},
  ) => {
    // Joined to the base address as text: without its leading slash, a path would go on naming
    // the host (`@evil.example/v1/orgs`, `.evil.example/…`, `:8443/…`), and the token with it.
    if (!path.startsWith("/")) {
      throw new Error(`${method.toUpperCase()} ${path}: a path starts with / (it is joined to ${baseUrl})`);
    }
    // `sandboxes/..` would be resolved by the URL before it is sent: a DELETE of a sandbox named
    // `..` would reach its project. Such a path is refused, never sent somewhere else.
    if (path.split(/[?#]/)[0]!.split("/").some(isDotSegment)) {
      throw new Error(`${method.toUpperCase()} ${path}: a path segment may not be . or .. (it would be resolved away)`);
    }
    const url = new URL(baseUrl + path);
    appendQuery(url, init.query);
    const headers: Record<string, string> = { accept: "application/json, application/problem+json" };
    let body: string | undefined;
    if (init.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(init.body);
    }
    // A caller's own headers (a provider's `anthropic-version` through /v1/llm) win over these defaults.
    for (const [name, value] of Object.entries(init.headers ?? {})) headers[name.toLowerCase()] = value;
    const request = new Request(url, {
      method: method.toUpperCase(),
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(init.signal ? { signal: init.signal } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
    });
    return readBody(await authorizedFetch(request), `${request.method} ${path}`);
  };

  const request = async <I extends OperationId>(id: I, params: RequestParams<I> = {}): Promise<ResponseOf<I>> => {
    const spec = operationSpec(id);
    const path = expandPath(spec.path, params.path as Record<string, unknown> | undefined);
    const answer = await call(spec.method, path, {
      query: params.query as Record<string, unknown> | undefined,
      body: params.body,
      ...(params.signal ? { signal: params.signal } : {}),
    });
    // Text where an operation of ours answers JSON: an HTML page of a proxy, or no installation.
    if (typeof answer === "string" && !spec.passthrough) {
      throw new Error(
        `${spec.method} ${path} answered text, not JSON (is ${baseUrl} an Agentplane installation?): ${excerpt(answer)}`,
      );
    }
    return answer as ResponseOf<I>;
  };

  async function* paginate<I extends ListOperationId>(id: I, params: RequestParams<I> = {}): AsyncGenerator<ItemOf<I>> {
    const spec = operationSpec(id);
    let query = { ...(params.query as Record<string, unknown> | undefined) };
    for (;;) {
      const page = (await request(id, { ...params, query } as RequestParams<I>)) as unknown as {
        items?: ItemOf<I>[];
        nextCursor?: string;
      };
      for (const item of page.items ?? []) yield item;
      // Lists without a cursor come whole; a cursor that repeats would loop forever, so it ends too.
      if (!spec.list?.paginated || !page.nextCursor || page.nextCursor === query.cursor) return;
      query = { ...query, cursor: page.nextCursor };
    }
  }

  return { baseUrl, api, fetch: authorizedFetch, request, paginate, raw: call, token };
}
