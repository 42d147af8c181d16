import { type LocalServer, readBody, startLocalServer } from "@agentplane/testkit";

/**
 * Local stand-ins for what the console's connection pages reach: a remote MCP server (Streamable
 * HTTP, JSON answers), an HTTP API serving its OpenAPI description, and AWS STS.
 */

const TOOLS = [
  {
    name: "echo",
    description: "Echoes the text back",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string", description: "What to echo" }, times: { type: "integer" } },
      required: ["text"],
    },
  },
  {
    name: "add",
    description: "Adds two numbers",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
  },
];

/** A stateless MCP server speaking JSON-RPC over Streamable HTTP (JSON responses), two tools. */
export async function startMcpStandIn(): Promise<LocalServer & { calls: string[] }> {
  const calls: string[] = [];
  const server = await startLocalServer(async (req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const message = JSON.parse(await readBody(req)) as {
      id?: number | string;
      method: string;
      params?: Record<string, unknown>;
    };
    if (message.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    const reply = (result: unknown) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
    };
    switch (message.method) {
      case "initialize":
        return reply({
          protocolVersion: message.params?.protocolVersion ?? "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "console-stand-in", version: "1.0.0" },
        });
      case "tools/list":
        return reply({ tools: TOOLS });
      case "tools/call": {
        const { name, arguments: args = {} } = message.params as { name: string; arguments?: Record<string, unknown> };
        calls.push(name);
        const text =
          name === "echo"
            ? Array.from({ length: Number(args.times ?? 1) }, () => `echo: ${args.text}`).join(" ")
            : String(Number(args.a) + Number(args.b));
        return reply({ content: [{ type: "text", text }] });
      }
      default:
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "no such method" } }));
    }
  });
  return Object.assign(server, { calls });
}

/** An HTTP API whose description (at `/openapi.json`) gains an operation when `revision` goes up. */
export async function startOpenApiStandIn(): Promise<LocalServer & { revision: number }> {
  const state = { revision: 0 };
  const server = await startLocalServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (url.pathname === "/openapi.json") {
      const paths: Record<string, unknown> = {
        "/orders": {
          get: {
            operationId: "listOrders",
            summary: "List orders",
            parameters: [{ name: "limit", in: "query", schema: { type: "integer" } }],
            responses: { "200": { description: "Orders" } },
          },
        },
      };
      if (state.revision > 0) {
        paths["/orders/{orderId}"] = {
          get: {
            operationId: "getOrder",
            summary: "One order",
            parameters: [{ name: "orderId", in: "path", required: true, schema: { type: "string" } }],
            responses: { "200": { description: "The order" } },
          },
        };
      }
      return send(200, {
        openapi: "3.0.3",
        info: { title: "Orders", version: `1.${state.revision}` },
        servers: [{ url: `http://127.0.0.1:${server.port}` }],
        paths,
      });
    }
    if (url.pathname === "/orders") return send(200, { items: [{ id: "o-1" }] });
    return send(404, { message: "not found" });
  });
  return Object.defineProperty(server, "revision", {
    get: () => state.revision,
    set: (v: number) => {
      state.revision = v;
    },
  }) as LocalServer & { revision: number };
}

/**
 * STS answering GetCallerIdentity for the key id in the request's SigV4 authorization (it does not
 * check the signature: the connections service's own tests do), and seeing which key arrived.
 */
export async function startStsStandIn(): Promise<LocalServer & { keyIds: string[] }> {
  const keyIds: string[] = [];
  const server = await startLocalServer(async (req, res) => {
    const body = await readBody(req);
    const keyId = /Credential=([^/]+)\//.exec(req.headers.authorization ?? "")?.[1];
    if (!keyId || !/^AWS4-HMAC-SHA256 /.test(req.headers.authorization ?? "")) {
      res.writeHead(403, { "content-type": "text/xml" });
      res.end("<ErrorResponse><Error><Code>MissingAuthenticationToken</Code></Error></ErrorResponse>");
      return;
    }
    keyIds.push(keyId);
    if (!body.includes("Action=GetCallerIdentity")) {
      res.writeHead(400, { "content-type": "text/xml" });
      res.end("<ErrorResponse><Error><Code>InvalidAction</Code></Error></ErrorResponse>");
      return;
    }
    res.writeHead(200, { "content-type": "text/xml" });
    res.end(
      `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:user/console</Arn><UserId>AIDACONSOLE</UserId><Account>123456789012</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>r1</RequestId></ResponseMetadata></GetCallerIdentityResponse>`,
    );
  });
  return Object.assign(server, { keyIds });
}

/** The bearer the model stand-in accepts (the installation's `CLOUD_A_BEARER_TOKEN`). */
export const MODEL_BEARER = "console-model-bearer";

/**
 * A `cloud-a` model runtime: `POST /model/{id}/invoke` answers an Anthropic message with token
 * usage, so calls through the inference proxy are metered and priced.
 */
export async function startModelStandIn(): Promise<LocalServer & { calls: number }> {
  const state = { calls: 0 };
  const server = await startLocalServer(async (req, res) => {
    await readBody(req);
    const match = /^\/model\/([^/]+)\/invoke$/.exec((req.url ?? "").split("?")[0] ?? "");
    if (req.headers.authorization !== `Bearer ${MODEL_BEARER}` || !match) {
      res.writeHead(403, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: "The security token included in the request is invalid." }));
      return;
    }
    state.calls++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: `msg_${state.calls}`,
        type: "message",
        role: "assistant",
        model: decodeURIComponent(match[1] ?? ""),
        content: [{ type: "text", text: "Hello" }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 1200, output_tokens: 400 },
      }),
    );
  });
  return Object.defineProperty(server, "calls", { get: () => state.calls }) as LocalServer & { calls: number };
}
