import { FetchRefusedError, type SafeFetcher } from "@agentplane/service-kit/outbound";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { LRUCache } from "lru-cache";
import type { ConnectorTool } from "../openapi/tools.ts";

const CLIENT_INFO = { name: "agentplane-connections", version: "1.0.0" };
const REQUEST_TIMEOUT_MS = 20_000;
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
 * the SSRF-safe fetcher.
 */
export async function connectRemote(server: RemoteServer, fetcher: SafeFetcher): Promise<Client> {
  const { Client, SSEClientTransport, StreamableHTTPClientTransport } = await mcpClientModules();
  const fetchLike = fetcher.fetch as unknown as FetchLike;
  const requestInit = { headers: server.headers };
  const url = new URL(server.url);
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  try {
    await client.connect(new StreamableHTTPClientTransport(url, { fetch: fetchLike, requestInit }), {
      timeout: REQUEST_TIMEOUT_MS,
    });
    return client;
  } catch (error) {
    if (refusal(error)) throw refusal(error);
    const status = httpStatusOf(error);
    if (status === undefined || status < 400 || status >= 500) throw asRefusal(error);
  }
  const legacy = new Client(CLIENT_INFO, { capabilities: {} });
  try {
    await legacy.connect(
      new SSEClientTransport(url, { fetch: fetchLike, requestInit, eventSourceInit: { fetch: fetchLike } }),
      {
        timeout: REQUEST_TIMEOUT_MS,
      },
    );
    return legacy;
  } catch (error) {
    throw asRefusal(error);
  }
}

/** Every tool of the server (following `nextCursor`), as connector tools. */
export async function listRemoteTools(client: Client): Promise<ConnectorTool[]> {
  const tools: ConnectorTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {}, { timeout: REQUEST_TIMEOUT_MS });
    for (const t of page.tools) {
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
 * Connected clients by connector (and the version of its settings), so a tool call does not pay for
 * an `initialize` round trip each time. A failed call drops the client; the next call reconnects.
 */
export class RemoteClientPool {
  private readonly clients = new LRUCache<string, Promise<Client>>({
    max: 200,
    ttl: 5 * 60_000,
    dispose: (value) => {
      value.then((c) => c.close()).catch(() => {});
    },
  });

  private readonly fetcher: SafeFetcher;

  constructor(fetcher: SafeFetcher) {
    this.fetcher = fetcher;
  }

  async callTool(
    key: string,
    server: RemoteServer,
    name: string,
    args: Record<string, unknown>,
  ): Promise<CallToolResult> {
    for (let attempt = 0; ; attempt++) {
      let pending = this.clients.get(key);
      if (!pending) {
        pending = connectRemote(server, this.fetcher);
        this.clients.set(key, pending);
      }
      try {
        const client = await pending;
        return (await client.callTool({ name, arguments: args }, undefined, {
          timeout: REQUEST_TIMEOUT_MS,
        })) as CallToolResult;
      } catch (error) {
        this.clients.delete(key);
        if (attempt > 0 || refusal(error)) throw asRefusal(error);
      }
    }
  }

  async close(): Promise<void> {
    const all = [...this.clients.values()];
    this.clients.clear();
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

function httpStatusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "number" && code >= 100 && code < 600) return code;
  const match = /HTTP (\d{3})|\((\d{3})\)|status(?: code)? (\d{3})/i.exec((error as Error)?.message ?? "");
  const value = match?.[1] ?? match?.[2] ?? match?.[3];
  return value ? Number(value) : undefined;
}

function asRefusal(error: unknown): FetchRefusedError {
  const found = refusal(error);
  if (found) return found;
  const status = httpStatusOf(error);
  if (status && status >= 400) return new FetchRefusedError(`http-${status}`, `the MCP server answered ${status}`);
  const message = (error as Error)?.message ?? "the MCP server could not be reached";
  if (/timed? ?out/i.test(message)) return new FetchRefusedError("timeout", message);
  return new FetchRefusedError("unreachable", message);
}
