import { createHash } from "node:crypto";
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from "@agentplane/contracts";
import { FetchRefusedError, type SafeFetcher } from "@agentplane/service-kit/outbound";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { LRUCache } from "lru-cache";
import { type AnswerShape, describeAnswer } from "../far-answer.ts";
import type { ConnectorTool } from "../openapi/tools.ts";

const CLIENT_INFO = { name: "agentplane-connections", version: "1.0.0" };
const MAX_TOOLS = 2_000;

export interface RemoteServer {
  url: string;
  headers: Record<string, string>;
}

/** The MCP SDK's client side, loaded when a connector first talks to a server (not at start). */
let clientModules:
  | Promise<{
      Client: typeof import("@modelcontextprotocol/sdk/client/index.js").Client;
      SSEClientTransport: typeof import("@modelcontextprotocol/sdk/client/sse.js").SSEClientTransport;
      StreamableHTTPClientTransport: typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js").StreamableHTTPClientTransport;
    }>
  | undefined;
function mcpClientModules() {
  clientModules ??= Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/sse.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
  ]).then(([index, sse, streamable]) => ({
    Client: index.Client,
    SSEClientTransport: sse.SSEClientTransport,
    StreamableHTTPClientTransport: streamable.StreamableHTTPClientTransport,
  }));
  return clientModules;
}

/**
 * Connects to a remote MCP server with the official SDK client: Streamable HTTP first and, when the
 * server answers that attempt with a 4xx, the older HTTP+SSE transport. Every request goes through
 * the SSRF-safe fetcher. A failure is a FetchRefusedError in words of our own (see `asRefusal`).
 */
export async function connectRemote(server: RemoteServer, fetcher: SafeFetcher): Promise<Client> {
  const { Client, SSEClientTransport, StreamableHTTPClientTransport } = await mcpClientModules();
  const answers = new AnswerRecorder(fetcher);
  const fetchLike = withoutAnswersToServer(answers.fetch);
  const requestInit = { headers: server.headers };
  const url = new URL(server.url);
  const bound = fetcher.timeoutMs;
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  answers.attach(client);
  try {
    await connectWithin(
      client,
      new StreamableHTTPClientTransport(url, { fetch: withoutStandaloneStream(fetchLike), requestInit }),
      bound,
    );
    return client;
  } catch (error) {
    if (refusal(error)) throw refusal(error);
    const status = httpStatusOf(error);
    if (status === undefined || status < 400 || status >= 500) throw asRefusal(error, answers.last, bound);
  }
  const legacy = new Client(CLIENT_INFO, { capabilities: {} });
  answers.attach(legacy);
  try {
    await connectWithin(
      legacy,
      new SSEClientTransport(url, { fetch: fetchLike, requestInit, eventSourceInit: { fetch: fetchLike } }),
      bound,
    );
    return legacy;
  } catch (error) {
    throw asRefusal(error, answers.last, bound);
  }
}

/** Larger bodies are requests of the platform's own (a tool call's arguments), never answers. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * The SDK client answers every request a server sends it (`ping`, and Method not found for the
 * rest; the platform's client offers no capability), each with a POST of its own: a server could
 * stream requests ahead of a tool call's result, a hundred thousand within the size cap, and have
 * the platform send as many requests back at once. Those answers are dropped here (the 202 a
 * server gives an answer), so a server's requests cost nothing beyond reading them.
 */
function withoutAnswersToServer(fetchLike: FetchLike): FetchLike {
  return (input, init) =>
    isAnswer(init)
      ? Promise.resolve(new Response(null, { status: 202, statusText: "Accepted" }))
      : fetchLike(input, init);
}

function isAnswer(init: RequestInit | undefined): boolean {
  const body = init?.body;
  if ((init?.method ?? "GET").toUpperCase() !== "POST" || typeof body !== "string" || body.length > MAX_ANSWER_BYTES) {
    return false;
  }
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return false;
  }
  const messages = Array.isArray(message) ? message : [message];
  return (
    messages.length > 0 &&
    messages.every((m) => !!m && typeof m === "object" && !("method" in m) && ("result" in m || "error" in m))
  );
}

/**
 * Streamable HTTP's standalone event stream (the GET a client opens after `initialized`, for the
 * server's own requests and notifications) is answered here with the 405 of a server that offers
 * none, and never sent: the platform's client uses no server-initiated message, and the stream
 * would stay open, unbounded in time, for as long as the pooled client lives. Every request the
 * platform makes is then a POST answered within the bound.
 */
function withoutStandaloneStream(fetchLike: FetchLike): FetchLike {
  return (input, init) =>
    (init?.method ?? "GET").toUpperCase() === "GET"
      ? Promise.resolve(new Response(null, { status: 405, statusText: "Method Not Allowed" }))
      : fetchLike(input, init);
}

/**
 * `initialize` is bounded by the SDK's request timeout, but the rest of a connect is not (the
 * `initialized` notification's POST, the HTTP+SSE transport waiting for its `endpoint` event): the
 * whole connect gets the same bound. A client that failed is closed, which aborts its requests, so
 * a server that never answers keeps no socket open.
 */
async function connectWithin(client: Client, transport: Transport, bound: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FetchRefusedError("timeout", `no answer within ${bound} ms`)), bound);
  });
  try {
    await Promise.race([client.connect(transport, { timeout: bound }), deadline]);
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The content type and declared size of the last answer a client's server gave, so an answer the
 * SDK could not read can be described without quoting it (the SDK's errors quote the body).
 */
class AnswerRecorder {
  last: AnswerShape | undefined;
  private readonly fetcher: SafeFetcher;

  constructor(fetcher: SafeFetcher) {
    this.fetcher = fetcher;
  }

  readonly fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const response = await this.fetcher.fetch(input, init as never);
    const length = response.headers.get("content-length");
    this.last = {
      contentType: response.headers.get("content-type"),
      ...(length && /^\d+$/.test(length) ? { bytes: Number(length) } : {}),
    };
    return response;
  }) as unknown as FetchLike;

  /** The client's later failures (a tool call) are described from the same record. */
  attach(client: Client): void {
    answersOf.set(client, this);
  }
}

const answersOf = new WeakMap<Client, AnswerRecorder>();

/** Every tool of the server (following `nextCursor`), as connector tools; each page within `bound` ms. */
export async function listRemoteTools(client: Client, bound: number): Promise<ConnectorTool[]> {
  const tools: ConnectorTool[] = [];
  let cursor: string | undefined;
  do {
    let page: Awaited<ReturnType<Client["listTools"]>>;
    try {
      page = await client.listTools(cursor ? { cursor } : {}, { timeout: bound });
    } catch (error) {
      throw asRefusal(error, answersOf.get(client)?.last, bound);
    }
    for (const t of page.tools) {
      // Stored and answered as JSON later, where a schema this deep overflows the stack.
      if (jsonNestsDeeperThan(t.inputSchema) || (t.outputSchema && jsonNestsDeeperThan(t.outputSchema))) {
        throw new FetchRefusedError(
          "bad-answer",
          `the MCP server listed a tool whose schema nests deeper than ${MAX_JSON_DEPTH} levels`,
        );
      }
      tools.push({
        name: t.name,
        description: t.description ?? t.title ?? t.name,
        inputSchema: t.inputSchema as Record<string, unknown>,
        ...(t.outputSchema ? { outputSchema: t.outputSchema as Record<string, unknown> } : {}),
      });
    }
    cursor = page.nextCursor;
  } while (cursor && tools.length < MAX_TOOLS);
  return tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * What a connected client was made with: its URL and headers, as a digest (the headers hold the
 * credential's secret, which the pool's keys should not).
 */
function serverDigest(server: RemoteServer): string {
  const headers = Object.entries(server.headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash("sha256")
    .update(JSON.stringify([server.url, headers]))
    .digest("base64url");
}

/**
 * Connected clients by connector (and the version of its settings), so a tool call does not pay for
 * an `initialize` round trip each time. A failed call drops the client; the next call reconnects.
 * A client is kept for the URL and headers it was made with: a rotated credential makes a new one
 * (the old one closes when it ages out).
 */
export class RemoteClientPool {
  private readonly clients = new LRUCache<string, Promise<Client>>({
    max: 200,
    ttl: 5 * 60_000,
    dispose: (value) => {
      value.then((c) => c.close()).catch(() => {});
    },
  });

  /** The key of each connector's current client (a bounded map, as the clients are). */
  private readonly current = new LRUCache<string, string>({ max: 200 });

  private readonly fetcher: SafeFetcher;

  constructor(fetcher: SafeFetcher) {
    this.fetcher = fetcher;
  }

  async callTool(
    connectorKey: string,
    server: RemoteServer,
    name: string,
    args: Record<string, unknown>,
  ): Promise<CallToolResult> {
    const key = `${connectorKey}:${serverDigest(server)}`;
    const before = this.current.get(connectorKey);
    if (before !== key) {
      // The connector's headers changed (a rotated credential): its old client goes now.
      if (before !== undefined) this.clients.delete(before);
      this.current.set(connectorKey, key);
    }
    for (let attempt = 0; ; attempt++) {
      let pending = this.clients.get(key);
      if (!pending) {
        pending = connectRemote(server, this.fetcher);
        this.clients.set(key, pending);
      }
      let client: Client | undefined;
      try {
        client = await pending;
        const result = (await client.callTool({ name, arguments: args }, undefined, {
          timeout: this.fetcher.timeoutMs,
        })) as CallToolResult;
        // Answered and audited as JSON, where a result this deep overflows the stack.
        if (jsonNestsDeeperThan(result)) {
          throw new FetchRefusedError(
            "bad-answer",
            `the MCP server's result nests deeper than ${MAX_JSON_DEPTH} levels`,
          );
        }
        return result;
      } catch (error) {
        this.clients.delete(key);
        if (attempt > 0 || refusal(error) || timedOut(error)) {
          throw asRefusal(error, client ? answersOf.get(client)?.last : undefined, this.fetcher.timeoutMs);
        }
      }
    }
  }

  async close(): Promise<void> {
    const all = [...this.clients.values()];
    this.clients.clear();
    this.current.clear();
    await Promise.allSettled(all.map(async (p) => (await p).close()));
  }
}

function refusal(error: unknown): FetchRefusedError | undefined {
  let cause: unknown = error;
  for (let i = 0; cause && i < 5; i++) {
    if (cause instanceof FetchRefusedError) return cause;
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * The HTTP status an SDK error carries: its `code` (StreamableHTTPError, SseError) or the status in
 * the SDK's own message prefix (the HTTP+SSE transport's POST), never a number from the server's words.
 */
function httpStatusOf(error: unknown): number | undefined {
  const e = error as { name?: unknown; code?: unknown; message?: unknown };
  if (e?.name === "McpError") return undefined;
  if (typeof e?.code === "number" && e.code >= 100 && e.code < 600) return e.code;
  if (e?.name === "UnauthorizedError") return 401;
  const match = /^Error POSTing to endpoint \(HTTP (\d{3})\)/.exec(typeof e?.message === "string" ? e.message : "");
  return match ? Number(match[1]) : undefined;
}

/** JSON-RPC error codes of the SDK's own making, not the server's. */
const CONNECTION_CLOSED = -32000;
const REQUEST_TIMEOUT = -32001;

/** The SDK gave up waiting: trying again on a fresh connection would only double the wait. */
function timedOut(error: unknown): boolean {
  const e = error as { name?: unknown; code?: unknown };
  return e?.name === "McpError" && e.code === REQUEST_TIMEOUT;
}

/**
 * What went wrong talking to an MCP server, in words of our own. The SDK's messages quote the
 * server: an HTTP error's body, an unexpected content type, the JSON parser's snippet of a broken
 * answer, a JSON-RPC error's message. A server may echo a credential it was sent into any of them,
 * and a quoted fragment is too short to redact, so none of it is kept: the cause is named with the
 * answer's content type and declared size, a JSON-RPC error by its code.
 */
function asRefusal(error: unknown, answer: AnswerShape | undefined, bound: number): FetchRefusedError {
  const found = refusal(error);
  if (found) return found;
  const e = error as { name?: unknown; code?: unknown };
  if (e?.name === "McpError" && typeof e.code === "number") {
    if (e.code === REQUEST_TIMEOUT) {
      return new FetchRefusedError("timeout", `no answer within ${bound} ms`);
    }
    if (e.code === CONNECTION_CLOSED) {
      return new FetchRefusedError("unreachable", "the connection to the MCP server closed before an answer");
    }
    return new FetchRefusedError("bad-answer", `the MCP server answered JSON-RPC error ${e.code}`);
  }
  const status = httpStatusOf(error);
  if (status && status >= 400) return new FetchRefusedError(`http-${status}`, `the MCP server answered ${status}`);
  const shape = answer ? ` (${describeAnswer(answer)})` : "";
  if (e?.code === -1) return new FetchRefusedError("bad-answer", `the MCP server's answer is not JSON-RPC${shape}`);
  if (error instanceof SyntaxError) {
    return new FetchRefusedError("bad-answer", `the MCP server's answer is not valid JSON${shape}`);
  }
  if (e?.name === "ZodError") {
    return new FetchRefusedError("bad-answer", `the MCP server's answer is not a JSON-RPC message${shape}`);
  }
  if (e?.name === "TimeoutError" || e?.name === "AbortError") {
    return new FetchRefusedError("timeout", "the MCP server did not answer in time");
  }
  return answer
    ? new FetchRefusedError("bad-answer", `the MCP server's answer could not be used${shape}`)
    : new FetchRefusedError("unreachable", "the MCP server could not be reached");
}
