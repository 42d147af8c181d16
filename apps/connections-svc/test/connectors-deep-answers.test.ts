// A far side may answer JSON nested far deeper than any request may be (MAX_JSON_DEPTH): a tool
// schema in a listing, a tool's result. Parsed, it is fine; answered or stored as JSON, it overflows
// the stack. Each is a far side's unusable answer (502) or, for an HTTP API's body, text only.
import { MAX_JSON_DEPTH } from "@agentplane/contracts";
import { type LocalServer, readBody, requirePostgres, startLocalServer } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();
const DEPTH = 50_000;
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

/** A Streamable HTTP MCP server written by hand: one tool `t`, its schema or its result nested deep. */
async function startDeepMcp(deep: "schema" | "result"): Promise<LocalServer> {
  return startLocalServer(async (req, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    const m = JSON.parse(await readBody(req)) as { id?: number; method?: string };
    if (m.id === undefined) return void res.writeHead(202).end();
    const answer = (result: string) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(`{"jsonrpc":"2.0","id":${m.id},"result":${result}}`);
    };
    if (m.method === "initialize") {
      return answer(
        JSON.stringify({
          protocolVersion: "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "deep", version: "1" },
        }),
      );
    }
    if (m.method === "tools/list") {
      const schema = deep === "schema" ? `{"type":"object","properties":{"x":${nested(DEPTH)}}}` : `{"type":"object"}`;
      return answer(`{"tools":[{"name":"t","inputSchema":${schema}}]}`);
    }
    if (m.method === "tools/call") return answer(`{"content":[],"structuredContent":${nested(DEPTH)}}`);
    answer("{}");
  });
}

describe.skipIf(!pg.available)(`far sides answering JSON nested too deep${pg.reason}`, () => {
  let w: World;
  const servers: LocalServer[] = [];

  beforeAll(async () => {
    w = await startWorld("connectors_deep_answers");
  }, 120_000);
  afterAll(async () => {
    await w?.close();
    await Promise.all(servers.map((s) => s.close()));
  });

  const problem = async (res: Response) => ({
    status: res.status,
    type: res.headers.get("content-type"),
    body: (await res.json()) as { reason?: string; detail?: string; structuredContent?: unknown; content?: unknown },
  });

  it("an MCP server listing a tool whose schema nests too deep: a 502 naming the depth", async () => {
    const server = await startDeepMcp("schema");
    servers.push(server);
    const res = await problem(
      await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, {
        name: "deep-schema",
        url: server.url,
      }),
    );
    expect([res.status, res.body.reason], res.body.detail).toEqual([502, "bad-answer"]);
    expect(res.body.detail).toContain(`nests deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it("an MCP server whose result nests too deep: the call is a 502 naming the depth", async () => {
    const server = await startDeepMcp("result");
    servers.push(server);
    const created = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, {
      name: "deep-result",
      url: server.url,
    });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { id: string }).id;
    const res = await problem(
      await w.call("POST", `/v1/mcp-servers/${id}/tools/call`, w.developer, { name: "t", arguments: {} }),
    );
    expect([res.status, res.body.reason], res.body.detail).toEqual([502, "bad-answer"]);
    expect(res.type).toContain("application/problem+json");
  });

  it("an HTTP API answering JSON nested too deep: the call answers its text, without structured content", async () => {
    const api = await startLocalServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(nested(DEPTH));
    });
    servers.push(api);
    const created = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name: "deep-http",
      spec: {
        openapi: "3.0.3",
        info: { title: "deep", version: "1" },
        paths: { "/deep": { get: { operationId: "deep", responses: { "200": { description: "ok" } } } } },
      },
      baseUrl: api.url,
    });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { id: string }).id;
    const res = await problem(
      await w.call("POST", `/v1/mcp-servers/${id}/tools/call`, w.developer, { name: "deep", arguments: {} }),
    );
    expect(res.status).toBe(200);
    expect(res.body.structuredContent).toBeUndefined();
    expect(JSON.stringify(res.body.content).length).toBeGreaterThan(DEPTH);
  });
});
