import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Principal } from "@agentplane/contracts";
import { signIdentity } from "@agentplane/service-kit";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();

const SPEC = {
  openapi: "3.0.3",
  info: { title: "nested", version: "1" },
  paths: {
    "/echo": {
      post: {
        operationId: "echo",
        requestBody: { content: { "application/json": { schema: { type: "object" } } } },
        responses: { "200": { description: "ok" } },
      },
    },
  },
};

/** JSON text of arrays nested `depth` levels, built as text: `JSON.stringify` itself gives up long before. */
const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe.skipIf(!pg.available)(`deeply nested tool arguments and descriptions${pg.reason}`, () => {
  let w: World;
  let upstream: Server;
  let connectorId = "";
  let received = 0;

  const post = async (path: string, as: Principal, text: string, accept?: string) =>
    w.service.fetch(
      new Request(`http://connections.test${path}`, {
        method: "POST",
        headers: {
          "x-agentplane-identity": await signIdentity(w.tenancy.keys, as, { audience: "connections" }),
          "content-type": "application/json",
          ...(accept ? { accept } : {}),
        },
        body: text,
      }),
    );

  beforeAll(async () => {
    w = await startWorld("connectors_nesting");
    upstream = createServer((req, res) => {
      received++;
      req.resume();
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const created = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name: "nested",
      spec: SPEC,
      baseUrl,
    });
    expect(created.status, await created.clone().text()).toBe(201);
    connectorId = ((await created.json()) as { id: string }).id;
  }, 120_000);
  afterAll(async () => {
    upstream?.close();
    await w?.close();
  });

  it("answers a REST call whose arguments nest too deep with a 400 naming them, and calls nothing", async () => {
    const res = await post(
      `/v1/mcp-servers/${connectorId}/tools/call`,
      w.developer,
      `{"name":"echo","arguments":{"body":{"x":${nested(20_000)}}}}`,
    );
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    const problem = (await res.json()) as { errors: { pointer: string; message: string }[] };
    expect(problem.errors).toEqual([
      { pointer: "/body/arguments", message: expect.stringContaining("deeper than 128 levels") },
    ]);
    expect(received).toBe(0);

    const fine = await post(
      `/v1/mcp-servers/${connectorId}/tools/call`,
      w.developer,
      `{"name":"echo","arguments":{"body":{"x":${nested(100)}}}}`,
    );
    expect(fine.status, await fine.clone().text()).toBe(200);
    expect(received).toBe(1);
  });

  it("answers the same call through the project's MCP endpoint with an error that says why", async () => {
    const res = await post(
      `/projects/${w.projectId}/mcp`,
      w.developer,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nested__echo","arguments":{"body":{"x":${nested(20_000)}}}}}`,
      "application/json, text/event-stream",
    );
    const text = await res.text();
    expect(text).toContain("nest too deep");
    expect(text).not.toContain("call stack");
    expect(received).toBe(1);
  });

  it("answers an inline description that nests too deep with a 400", async () => {
    const res = await post(
      `/v1/projects/${w.projectId}/mcp-servers/discover/preview`,
      w.owner,
      `{"spec":{"openapi":"3.0.3","x-deep":${nested(20_000)}}}`,
    );
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { errors: { pointer: string }[] };
    expect(problem.errors.map((e) => e.pointer)).toContain("/body/spec");
  });
});
