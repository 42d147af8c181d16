import type { IncomingMessage, ServerResponse } from "node:http";
import { type LocalServer, readBody, startLocalServer } from "@agentplane/testkit";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { generateLargeDescription } from "./large-description.ts";

export const API_TOKEN = "sk-upstream-7f3a9c";

export interface ApiUpstream extends LocalServer {
  /** Requests the API saw: method, path, authorization header. */
  seen: Array<{ method: string; path: string; authorization: string | undefined; body: string }>;
  /** The served description's revision (changing it changes `/openapi.json`). */
  revision: number;
}

/**
 * A local HTTP API that implements a few operations of the generated commerce description and
 * serves that description at `/openapi.json`. Calls without the bearer credential get a 401.
 */
export async function startApiUpstream(): Promise<ApiUpstream> {
  const accounts = new Map<string, Record<string, unknown>>([
    ["acc-1", { id: "acc-1", name: "First", status: "active" }],
  ]);
  const state = { seen: [] as ApiUpstream["seen"], revision: 0 };
  const server = await startLocalServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    const body = await readBody(req);
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (url.pathname === "/openapi.json") {
      return send(
        200,
        generateLargeDescription({
          resources: 40,
          serverUrl: `http://127.0.0.1:${server.port}`,
          revision: state.revision,
        }),
      );
    }
    state.seen.push({
      method: req.method ?? "",
      path: `${url.pathname}${url.search}`,
      authorization: req.headers.authorization,
      body,
    });
    if (req.headers.authorization !== `Bearer ${API_TOKEN}`) return send(401, { code: "unauthorized", message: "no" });
    const match = /^\/accounts(?:\/([^/]+))?$/.exec(url.pathname);
    if (!match) return send(404, { code: "not_found", message: url.pathname });
    const id = match[1];
    if (!id && req.method === "GET") {
      return send(200, {
        items: [...accounts.values()].slice(0, Number(url.searchParams.get("limit") ?? 20)),
        total: accounts.size,
      });
    }
    if (!id && req.method === "POST") {
      const created = { ...(JSON.parse(body) as Record<string, unknown>), id: `acc-${accounts.size + 1}` };
      accounts.set(created.id as string, created);
      return send(201, created);
    }
    const account = id ? accounts.get(id) : undefined;
    if (!account) return send(404, { code: "not_found", message: `account ${id}` });
    if (req.method === "GET") return send(200, account);
    if (req.method === "DELETE") {
      accounts.delete(id as string);
      res.writeHead(204);
      return void res.end();
    }
    return send(405, { code: "method", message: req.method ?? "" });
  });
  return Object.defineProperties(server, {
    seen: { get: () => state.seen },
    revision: {
      get: () => state.revision,
      set: (value: number) => {
        state.revision = value;
      },
    },
  }) as ApiUpstream;
}

/** The two tools every upstream MCP server here offers; `calls` records each call by tool name. */
function upstreamTools(calls: string[]): McpServer {
  const mcp = new McpServer({ name: "upstream-tools", version: "1.0.0" });
  mcp.registerTool(
    "echo",
    { description: "Echoes the text back", inputSchema: { text: z.string() } },
    async ({ text }) => {
      calls.push("echo");
      return { content: [{ type: "text", text: `echo: ${text}` }] };
    },
  );
  mcp.registerTool(
    "add",
    { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => {
      calls.push("add");
      return { content: [{ type: "text", text: String(a + b) }] };
    },
  );
  return mcp;
}

/**
 * Answers one request as a stateless Streamable HTTP MCP server named `name` with one tool, `add`
 * (the request's JSON-RPC message given, or read from it).
 */
export async function answerAddToolMcp(
  name: string,
  req: IncomingMessage,
  res: ServerResponse,
  message?: unknown,
): Promise<void> {
  const mcp = new McpServer({ name, version: "1.0.0" });
  mcp.registerTool("add", { description: "Adds", inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
  }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void transport.close();
    void mcp.close();
  });
  await mcp.connect(transport);
  await transport.handleRequest(req, res, message ?? JSON.parse(await readBody(req)));
}

/** A remote MCP server built with the SDK (stateless Streamable HTTP) with two tools. */
export async function startMcpUpstream(): Promise<LocalServer & { calls: string[] }> {
  const calls: string[] = [];
  const server = await startLocalServer(async (req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const mcp = upstreamTools(calls);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, JSON.parse(await readBody(req)));
  });
  return Object.assign(server, { calls });
}

/**
 * A remote MCP server of the older HTTP+SSE transport only (the SDK's `SSEServerTransport`):
 * `GET /sse` opens the event stream that names the message endpoint, `POST /messages?sessionId=`
 * carries requests. A Streamable HTTP POST to `/sse` gets a 405, as from servers of that era.
 * `streams` counts event streams opened, `rejectedPosts` the Streamable HTTP attempts refused.
 */
export async function startSseMcpUpstream(): Promise<
  LocalServer & { calls: string[]; streams: number; rejectedPosts: number }
> {
  const calls: string[] = [];
  const state = { streams: 0, rejectedPosts: 0 };
  const sessions = new Map<string, SSEServerTransport>();
  const server = await startLocalServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "GET" && url.pathname === "/sse") {
      state.streams++;
      const transport = new SSEServerTransport("/messages", res);
      sessions.set(transport.sessionId, transport);
      const mcp = upstreamTools(calls);
      res.on("close", () => {
        sessions.delete(transport.sessionId);
        void mcp.close();
      });
      await mcp.connect(transport);
      return;
    }
    if (req.method === "POST" && url.pathname === "/messages") {
      const transport = sessions.get(url.searchParams.get("sessionId") ?? "");
      if (!transport) {
        res.writeHead(404).end();
        return;
      }
      await transport.handlePostMessage(req, res);
      return;
    }
    if (req.method === "POST") state.rejectedPosts++;
    res.writeHead(405).end();
  });
  return Object.defineProperties(Object.assign(server, { calls }), {
    streams: { get: () => state.streams },
    rejectedPosts: { get: () => state.rejectedPosts },
  }) as LocalServer & { calls: string[]; streams: number; rejectedPosts: number };
}
