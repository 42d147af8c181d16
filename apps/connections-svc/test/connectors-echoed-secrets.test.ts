// A server may echo a key it was sent into a broken answer. Parsers quote a few characters around
// the fault, too few for any redaction to recognize as the key, so nothing of such an answer may
// reach a connector's lastError, a problem or the logs.
import { createLogger } from "@agentplane/service-kit";
import { type LocalServer, readBody, requirePostgres, startLocalServer } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_TOKEN, answerAddToolMcp } from "./connectors-fixtures/upstreams.ts";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();
const SPEC_SECRET = "sk-echo-4f9b2c7d1e6a3850";
const MCP_SECRET = "mcp-key-81d0c3e9b7a24f65";

/** Every run of six characters of the secret: none may appear anywhere. */
function expectNoFragment(text: string, secret: string): void {
  for (let i = 0; i + 6 <= secret.length; i++) {
    const fragment = secret.slice(i, i + 6);
    expect(text, `"${fragment}" of the secret appears`).not.toContain(fragment);
  }
}

type SpecMode = "valid" | "broken-json" | "broken-yaml" | "invalid-openapi";

interface SpecStandIn extends LocalServer {
  mode: SpecMode;
}

/** `/openapi.json` answers a description that echoes the request's `api_key`, per `mode`. */
async function startSpecStandIn(): Promise<SpecStandIn> {
  const state = { mode: "valid" as SpecMode };
  const server = await startLocalServer((req, res) => {
    const key = new URL(req.url ?? "/", "http://x").searchParams.get("api_key") ?? "";
    const ping = { get: { operationId: "ping", responses: { "200": { description: "ok" } } } };
    const valid = { openapi: "3.0.3", info: { title: "echo", version: "1" }, paths: { "/ping": ping } };
    res.writeHead(200, { "content-type": state.mode === "broken-yaml" ? "application/yaml" : "application/json" });
    if (state.mode === "valid") return void res.end(JSON.stringify({ ...valid, servers: [{ url: server.url }] }));
    // The key where a value should be: the parser stops at its first character and quotes from there.
    if (state.mode === "broken-json") return void res.end(`{"openapi": "3.0.3", "echo": ${key}, "info": {}}`);
    if (state.mode === "broken-yaml") return void res.end(`openapi: 3.0.3\necho: [${key}\n  - : :\n`);
    res.end(
      JSON.stringify({
        ...valid,
        servers: [{ url: server.url }],
        paths: {
          "/ping": { get: { ...ping.get, [key.slice(3)]: 1 } },
          "/pong": { get: { operationId: "pong", responses: { "200": { $ref: `#/components/${key.slice(2)}` } } } },
        },
      }),
    );
  });
  return Object.defineProperty(server, "mode", {
    get: () => state.mode,
    set: (mode: SpecMode) => {
      state.mode = mode;
    },
  }) as SpecStandIn;
}

type McpMode = "valid" | "broken-json" | "rpc-error" | "content-type";

interface McpStandIn extends LocalServer {
  mode: McpMode;
}

/**
 * `/mcp`: an MCP server with one tool (`add`) while `valid`; otherwise every request is answered
 * with the credential it was sent (the bearer token, the `api_key` of its URL) echoed into JSON that
 * does not parse, a JSON-RPC error's message, or the content type.
 */
async function startMcpStandIn(): Promise<McpStandIn> {
  const state = { mode: "valid" as McpMode };
  const server = await startLocalServer(async (req, res) => {
    const key = new URL(req.url ?? "/", "http://x").searchParams.get("api_key") ?? "";
    const token = (req.headers.authorization ?? "").replace(/^Bearer /, "");
    const message = JSON.parse(await readBody(req)) as { id?: number };
    if (state.mode === "valid") {
      return answerAddToolMcp("echo-mcp", req, res, message);
    }
    if (message.id === undefined) return void res.writeHead(202).end();
    if (state.mode === "broken-json") {
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(`{"jsonrpc": "2.0", "id": ${message.id}, "result": ${token}${key}}`);
    }
    if (state.mode === "rpc-error") {
      res.writeHead(200, { "content-type": "application/json" });
      const error = { code: -32050, message: `key ${key} with token ${token} is not accepted` };
      return void res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, error }));
    }
    res.writeHead(200, { "content-type": `text/plain; token=${token}; key=${key}` });
    res.end("{}");
  });
  return Object.defineProperty(server, "mode", {
    get: () => state.mode,
    set: (mode: McpMode) => {
      state.mode = mode;
    },
  }) as McpStandIn;
}

describe.skipIf(!pg.available)(`nothing of a server's broken answer is quoted${pg.reason}`, () => {
  let w: World;
  let spec: SpecStandIn;
  let mcp: McpStandIn;
  const logs: string[] = [];

  beforeAll(async () => {
    const logger = createLogger("connections", "trace", { write: (line) => void logs.push(line) });
    [w, spec, mcp] = await Promise.all([
      startWorld("connectors_echoed_secrets", { logger }),
      startSpecStandIn(),
      startMcpStandIn(),
    ]);
  }, 120_000);
  afterAll(async () => {
    await w?.close();
    await spec?.close();
    await mcp?.close();
  });

  const specUrl = () => `${spec.url}/openapi.json?api_key=${SPEC_SECRET}`;

  it("a description that is not JSON: the 400, lastError and logs name the cause, not the text", async () => {
    spec.mode = "valid";
    const created = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name: "echoing-spec",
      specUrl: specUrl(),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = (await created.json()) as { id: string };

    spec.mode = "broken-json";
    const again = await w.call("POST", `/v1/mcp-servers/${id}/discover/url`, w.owner);
    const text = await again.text();
    expect(again.status, text).toBe(400);
    expect(JSON.parse(text)).toMatchObject({
      errors: [
        {
          pointer: "/body/specUrl",
          message: expect.stringMatching(
            /^the server's answer is not valid JSON(?: at line 1, column \d+)? \(content-type application\/json, \d+ bytes\)$/,
          ),
        },
      ],
    });
    expectNoFragment(text, SPEC_SECRET);

    const got = await (await w.call("GET", `/v1/mcp-servers/${id}`, w.viewer)).text();
    expect(JSON.parse(got)).toMatchObject({ status: "error", lastError: expect.any(String) });
    expectNoFragment(got, SPEC_SECRET);

    for (const path of [
      `/v1/projects/${w.projectId}/mcp-servers/http`,
      `/v1/projects/${w.projectId}/mcp-servers/discover/preview`,
    ]) {
      const res = await w.call("POST", path, w.owner, { name: "broken-spec", specUrl: specUrl() });
      const answer = await res.text();
      expect(res.status, answer).toBe(400);
      expectNoFragment(answer, SPEC_SECRET);
    }
    expectNoFragment(logs.join("\n"), SPEC_SECRET);
  });

  it("YAML that does not parse, and an invalid description, quote none of it either", async () => {
    spec.mode = "broken-yaml";
    const yaml = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/discover/preview`, w.owner, {
      specUrl: specUrl(),
    });
    const yamlText = await yaml.text();
    expect(yaml.status, yamlText).toBe(400);
    expect(yamlText).toMatch(/not valid YAML at line 2, column \d+ \(content-type application\/yaml, \d+ bytes\)/);
    expectNoFragment(yamlText, SPEC_SECRET);

    spec.mode = "invalid-openapi";
    const invalid = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/discover/preview`, w.owner, {
      specUrl: specUrl(),
    });
    const invalidText = await invalid.text();
    expect(invalid.status, invalidText).toBe(400);
    // The rule broken is named (it comes from the OpenAPI schema); the document is not quoted.
    expect(invalidText).toMatch(/must NOT have additional properties|not shown/);
    expectNoFragment(invalidText, SPEC_SECRET);
    expectNoFragment(logs.join("\n"), SPEC_SECRET);
  });

  it("an MCP server echoing its key and token into a broken answer: nothing of it is quoted", async () => {
    mcp.mode = "valid";
    const url = `${mcp.url}/mcp?api_key=${MCP_SECRET}`;
    const created = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, {
      name: "echoing-mcp",
      url,
      credentialId: w.credentialId,
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const add = () =>
      w.call("POST", `/v1/mcp-servers/${id}/tools/call`, w.developer, { name: "add", arguments: { a: 1, b: 2 } });
    expect((await add()).status).toBe(200);
    const expectQuotesNothing = (text: string) => {
      expectNoFragment(text, MCP_SECRET);
      expectNoFragment(text, API_TOKEN);
    };

    const causes: Record<Exclude<McpMode, "valid">, RegExp> = {
      "broken-json": /answer is not valid JSON \(content-type application\/json(, \d+ bytes)?\)/,
      "rpc-error": /answered JSON-RPC error -32050/,
      "content-type": /answer is not JSON-RPC \(content-type text\/plain/,
    };
    for (const [mode, cause] of Object.entries(causes) as Array<[McpMode, RegExp]>) {
      mcp.mode = mode;
      const again = await w.call("POST", `/v1/mcp-servers/${id}/discover/url`, w.owner);
      const againText = await again.text();
      expect(againText, mode).toMatch(cause);
      expectQuotesNothing(againText);
      const got = await (await w.call("GET", `/v1/mcp-servers/${id}`, w.viewer)).text();
      expect(JSON.parse(got), mode).toMatchObject({ status: "error", lastError: expect.stringMatching(cause) });
      expectQuotesNothing(got);

      const called = await add();
      const calledText = await called.text();
      expect(called.status, calledText).toBe(502);
      expect(calledText, mode).toMatch(cause);
      expectQuotesNothing(calledText);

      const preview = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/discover/preview`, w.owner, {
        url,
      });
      expectQuotesNothing(await preview.text());
    }
    expectQuotesNothing(logs.join("\n"));
  });
});
