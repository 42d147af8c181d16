import { PAGE_CSP, PAGE_SECURITY_HEADERS, type Permission, type Principal } from "@agentplane/contracts";
import { AGENT_MANAGE_HEADER } from "@agentplane/contracts/runtime";
import { ProblemError } from "@agentplane/problem-details";
import { readAtMost } from "@agentplane/service-kit";
import { Agent, fetch as undiciFetch } from "undici";
import { API_CACHE_CONTROL } from "./response-headers.ts";

/** The agent runtime the gateway fronts: its address (loopback in the all-in-one) and its project. */
export interface AgentRuntimeTarget {
  url: string;
  projectId: string;
}

export const AGENT_PREFIX = "/agent";
/** The runtime's receiver takes 1 MiB; a little more lets it answer the 413 itself. */
const MAX_FORWARDED_BODY = 1024 * 1024 + 1024;

const bodyTooLarge = () => new ProblemError("payload-too-large", { detail: "The body is larger than 1 MiB" });

/**
 * The runtime's answer as it streams, ended (not errored) once the client has gone: its going
 * aborts the fetch, and an errored body would be logged by the server, with a stack, for every
 * browser tab closed on a thread's live stream.
 */
function endsQuietly(body: ReadableStream<Uint8Array>, clientGone: AbortSignal): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (err) {
        if (clientGone.aborted) controller.close();
        else controller.error(err);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** Hop-by-hop and gateway-only headers never go to the runtime. */
const DROPPED = new Set([
  "host",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "upgrade",
  "content-length",
  "cookie",
]);

/**
 * What a request to the runtime's API needs: viewers read, developers chat (and stop their turns),
 * admins change settings, webhooks, schedules and memory.
 */
export function agentPermission(method: string, runtimePath: string): Permission {
  if (method === "GET" || method === "HEAD") return "agent:read";
  if (method === "POST" && /^\/agents\/threads(\/[^/]+\/(messages|stop))?$/.test(runtimePath)) return "agent:chat";
  return "agent:manage";
}

export type AgentRoute =
  | { kind: "redirect" }
  | { kind: "page"; runtimePath: string }
  | { kind: "api"; runtimePath: string }
  | { kind: "webhook"; runtimePath: string }
  | { kind: "none" };

/** Where a path below /agent goes on the runtime. */
export function agentRoute(method: string, pathname: string): AgentRoute {
  if (pathname === AGENT_PREFIX) return { kind: "redirect" };
  const rest = pathname.slice(AGENT_PREFIX.length);
  if (rest.startsWith("/api/")) return { kind: "api", runtimePath: rest.slice("/api".length) };
  const hook = /^\/webhooks\/([^/]+)$/.exec(rest);
  if (hook && method === "POST") return { kind: "webhook", runtimePath: `/agents/webhooks/${hook[1]}` };
  if ((method === "GET" || method === "HEAD") && (rest === "/" || /^\/assets\/[\w.-]+$/.test(rest)))
    return { kind: "page", runtimePath: rest };
  return { kind: "none" };
}

const formatSeconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;

/** What went wrong reaching the runtime, in words: the system's code (refused, reset, not found). */
function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === "string") return cause.code === "ECONNREFUSED" ? "connection refused" : cause.code;
  return typeof cause?.message === "string" ? cause.message : String((err as Error)?.message ?? err);
}

function forwardedHeaders(source: Headers, options: { keepAuthorization: boolean; requestId: string }): Headers {
  const headers = new Headers();
  source.forEach((value, name) => {
    const key = name.toLowerCase();
    if (DROPPED.has(key)) return;
    // Our own credentials stop here; a webhook's Authorization is the sender's (bearer verification).
    if (key === "authorization" && !options.keepAuthorization) return;
    if (key.startsWith("x-agentplane-")) return;
    // Where the browser's request came from is the gateway's concern (it authenticated a token);
    // passed on, the console's Origin would read as another site to the runtime's own check.
    if (key === "origin" || key.startsWith("sec-fetch-")) return;
    headers.set(name, value);
  });
  headers.set("x-request-id", options.requestId);
  return headers;
}

/**
 * Fronts the agent runtime at /agent: the web UI's files (public: they hold no data), its API at
 * /agent/api/** for callers authorized on the runtime's project, and the webhook receiver at
 * /agent/webhooks/<name>, passed through unauthenticated (senders cannot carry our tokens; the
 * runtime applies each subscription's own verification).
 */
export class AgentFront {
  #target: AgentRuntimeTarget | undefined;
  readonly #timeoutMs: number;
  /** Its own wait, not undici's: a turn asked for without streaming may rightly take minutes. */
  readonly #dispatcher = new Agent({ headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 10_000 });

  constructor(options: { timeoutMs?: number | undefined } = {}) {
    this.#timeoutMs = options.timeoutMs ?? 300_000;
  }

  /** Set once the runtime runs (the all-in-one starts it after the gateway). */
  connect(target: AgentRuntimeTarget | undefined): void {
    this.#target = target;
  }

  get target(): AgentRuntimeTarget | undefined {
    return this.#target;
  }

  close(): void {
    void this.#dispatcher.destroy().catch(() => {});
  }

  async forward(
    request: Request,
    url: URL,
    route: Exclude<AgentRoute, { kind: "redirect" } | { kind: "none" }>,
    requestId: string,
    options: { manage?: boolean } = {},
  ): Promise<Response> {
    const target = this.#target;
    if (!target)
      throw new ProblemError("service-unavailable", { detail: "No agent runtime is connected to this platform" });
    const method = request.method.toUpperCase();
    let body: Uint8Array | undefined;
    if (method !== "GET" && method !== "HEAD") {
      if (Number(request.headers.get("content-length") ?? 0) > MAX_FORWARDED_BODY) throw bodyTooLarge();
      // Counted as it streams: webhook senders reach this without a token, and a chunked body has
      // no length to refuse up front.
      if (request.body) body = await readAtMost(request.body, MAX_FORWARDED_BODY, bodyTooLarge);
    }
    const headers = forwardedHeaders(request.headers, { keepAuthorization: route.kind === "webhook", requestId });
    // Set after the caller's own `x-agentplane-*` headers were dropped: only the gateway says it.
    if (options.manage !== undefined) headers.set(AGENT_MANAGE_HEADER, String(options.manage));
    // Bounded until the runtime starts answering; a thread's live stream then runs as long as it runs.
    const waiting = new AbortController();
    const timer = setTimeout(() => waiting.abort(), this.#timeoutMs);
    let response: Awaited<ReturnType<typeof undiciFetch>>;
    try {
      response = await undiciFetch(`${target.url}${route.runtimePath}${url.search}`, {
        method,
        headers: [...headers],
        redirect: "manual",
        ...(body ? { body } : {}),
        signal: AbortSignal.any([request.signal, waiting.signal]),
        dispatcher: this.#dispatcher,
      });
    } catch (err) {
      if (waiting.signal.aborted && !request.signal.aborted)
        throw new ProblemError("gateway-timeout", {
          detail: `The agent runtime did not start answering within ${formatSeconds(this.#timeoutMs)} (AGENT_RUNTIME_TIMEOUT_MS)`,
        });
      throw new ProblemError("bad-gateway", { detail: `The agent runtime did not answer: ${causeOf(err)}` });
    } finally {
      clearTimeout(timer);
    }
    // Streamed through as it comes (the live SSE of a thread must not be buffered).
    const out = new Headers(response.headers);
    out.delete("content-encoding");
    out.delete("content-length");
    out.delete("transfer-encoding");
    out.set("x-request-id", requestId);
    for (const [name, value] of Object.entries(PAGE_SECURITY_HEADERS)) out.set(name, value);
    // The runtime's page shares the console's origin: the same policy (no framing, own scripts only).
    if (route.kind === "page") out.set("content-security-policy", PAGE_CSP);
    // The runtime's API answers are the project's threads and memory: as the platform's API's.
    else if (!out.has("cache-control")) out.set("cache-control", API_CACHE_CONTROL);
    return new Response(response.body && endsQuietly(response.body as ReadableStream<Uint8Array>, request.signal), {
      status: response.status,
      headers: out,
    });
  }
}

export type { Principal };
