// A remote MCP server a tenant registers may be hostile: it answers the handshake like any other,
// then floods an answer that never ends, or holds open a stream the platform did not ask for.
// Whatever it does, the platform reads at most the fetcher's byte cap of any answer and keeps no
// request to it open past the time bound.
import type { ServerResponse } from "node:http";
import { type LocalServer, readBody, requirePostgres, startLocalServer } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerAddToolMcp } from "./connectors-fixtures/upstreams.ts";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();
const TIMEOUT_MS = 4_000;
const MAX_BYTES = 256 * 1024;

interface HostileMcp extends LocalServer {
  /** Bytes written into the flooded `tools/call` answers. */
  flooded: number;
  /** GET requests received (the standalone event stream of Streamable HTTP). */
  gets: number;
  /** Connections of GET requests still open. */
  openGets: Set<ServerResponse>;
  /** How `tools/call` is answered: flooded, answered, or first with many requests of the server's own. */
  mode: "flood" | "flood-event" | "answer" | "requests" | "chatty";
  /** POSTs that carried an answer to one of the server's own requests. */
  answers: number;
}

/** The requests the server sends ahead of its answer in `requests` mode. */
const SERVER_REQUESTS = 300;

/**
 * Answers `initialize` and `tools/list` as an SDK server with one tool, `add`; a `tools/call` gets a
 * JSON-RPC answer whose text never ends (written as fast as the connection takes it); a GET gets an
 * event stream that stays open and says nothing.
 */
async function startHostileMcp(): Promise<HostileMcp> {
  const state = {
    flooded: 0,
    gets: 0,
    openGets: new Set<ServerResponse>(),
    mode: "flood" as HostileMcp["mode"],
    answers: 0,
  };
  const server = await startLocalServer(async (req, res) => {
    if (req.method === "GET") {
      state.gets++;
      state.openGets.add(res);
      res.on("close", () => state.openGets.delete(res));
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.flushHeaders();
      return;
    }
    if (req.method !== "POST") return void res.writeHead(405).end();
    const message = JSON.parse(await readBody(req)) as { id?: number; method?: string };
    if (message.method === undefined) {
      state.answers++;
      return void res.writeHead(202).end();
    }
    if (message.method !== "tools/call" || state.mode === "answer") {
      return answerAddToolMcp("hostile", req, res, message);
    }
    if (state.mode === "requests" || state.mode === "chatty") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (let i = 0; i < SERVER_REQUESTS; i++) {
        res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: `s${i}`, method: "ping" })}\n\n`);
      }
      // Many small events, more than the cap together: a stream may go on as long as each event is small.
      const note = {
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "info", data: "x".repeat(900) },
      };
      for (let i = 0; state.mode === "chatty" && i < (2 * MAX_BYTES) / 900; i++) {
        res.write(`event: message\ndata: ${JSON.stringify(note)}\n\n`);
      }
      const result = { jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: "3" }] } };
      return void res.end(`event: message\ndata: ${JSON.stringify(result)}\n\n`);
    }
    if (state.mode === "flood-event") {
      // One event that never ends: its data line goes on without a line break.
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(
        `event: message\ndata: {"jsonrpc":"2.0","id":${message.id},"result":{"content":[{"type":"text","text":"`,
      );
    } else {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(`{"jsonrpc":"2.0","id":${message.id},"result":{"content":[{"type":"text","text":"`);
    }
    const chunk = "A".repeat(64 * 1024);
    let open = true;
    res.on("close", () => {
      open = false;
    });
    const pump = () => {
      while (open && res.write(chunk)) state.flooded += chunk.length;
      if (open) {
        state.flooded += chunk.length;
        res.once("drain", pump);
      }
    };
    pump();
  });
  return Object.defineProperties(server, {
    flooded: { get: () => state.flooded },
    gets: { get: () => state.gets },
    openGets: { get: () => state.openGets },
    mode: {
      get: () => state.mode,
      set: (mode: HostileMcp["mode"]) => {
        state.mode = mode;
      },
    },
    answers: { get: () => state.answers },
  }) as HostileMcp;
}

describe.skipIf(!pg.available)(`a hostile remote MCP server${pg.reason}`, () => {
  let w: World;
  let mcp: HostileMcp;
  let connectorId = "";

  beforeAll(async () => {
    [w, mcp] = await Promise.all([
      startWorld("connectors_hostile_mcp", { fetcher: { timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES } }),
      startHostileMcp(),
    ]);
    const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, {
      name: "hostile",
      url: `${mcp.url}/mcp`,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    connectorId = ((await res.json()) as { id: string }).id;
  }, 120_000);
  afterAll(async () => {
    for (const res of mcp?.openGets ?? []) res.destroy();
    await w?.close();
    await mcp?.close();
  });

  it("an answer that never ends is cut at the byte cap: a 502 naming the size, long before the timeout", async () => {
    const started = Date.now();
    const res = await w.call("POST", `/v1/mcp-servers/${connectorId}/tools/call`, w.developer, {
      name: "add",
      arguments: { a: 1, b: 2 },
    });
    const elapsed = Date.now() - started;
    const body = (await res.json()) as { reason?: string; detail?: string };
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect([res.status, body.reason], body.detail).toEqual([502, "too-large"]);
    expect(body.detail).toContain(`${MAX_BYTES} bytes`);
    expect(elapsed).toBeLessThan(TIMEOUT_MS);
    // The platform stopped reading: what the server managed to write is bounded by the cap plus
    // what the socket buffers hold, not by how long it kept writing.
    const written = mcp.flooded;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(mcp.flooded - written).toBeLessThan(8 * MAX_BYTES);
  });

  it("keeps no request to the server open past the time bound (no idle event stream it did not ask for)", async () => {
    mcp.mode = "answer";
    const res = await w.call("POST", `/v1/mcp-servers/${connectorId}/tools/call`, w.developer, {
      name: "add",
      arguments: { a: 1, b: 2 },
    });
    expect(res.status, await res.text()).toBe(200);
    // The SDK client opens its standalone stream right after the handshake, without waiting for it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect([mcp.gets, mcp.openGets.size]).toEqual([0, 0]);
  });

  it("answers none of the server's own requests: a stream of them costs one call, not a request back each", async () => {
    mcp.mode = "requests";
    const res = await w.call("POST", `/v1/mcp-servers/${connectorId}/tools/call`, w.developer, {
      name: "add",
      arguments: { a: 1, b: 2 },
    });
    expect(res.status, await res.text()).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(mcp.answers).toBe(0);
  });

  it("reads an event stream an event at a time: many small events past the cap together are no refusal", async () => {
    mcp.mode = "chatty";
    const res = await w.call("POST", `/v1/mcp-servers/${connectorId}/tools/call`, w.developer, {
      name: "add",
      arguments: { a: 1, b: 2 },
    });
    expect(res.status, await res.text()).toBe(200);
  });

  it("an event that never ends is cut at the byte cap; the call ends within its bound", async () => {
    mcp.mode = "flood-event";
    const before = mcp.flooded;
    const res = await w.call("POST", `/v1/mcp-servers/${connectorId}/tools/call`, w.developer, {
      name: "add",
      arguments: { a: 1, b: 2 },
    });
    // The SDK hears of a broken event stream only through its error callback: the call itself
    // ends at its time bound. What the server wrote is the cap and the sockets' buffers, not 4 s of flood.
    expect(res.status).toBe(504);
    expect(mcp.flooded - before).toBeLessThan(32 * MAX_BYTES);
  });
});
