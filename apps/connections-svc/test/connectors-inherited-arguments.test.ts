import { type LocalServer, requirePostgres, startLocalServer } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();

/**
 * Parameters named like what every JavaScript object inherits (`constructor`, `toString`,
 * `valueOf`): an argument the caller did not send is absent, not the inherited function.
 */
const SPEC = {
  openapi: "3.0.3",
  info: { title: "objects", version: "1" },
  paths: {
    "/items": {
      get: {
        operationId: "listItems",
        parameters: [
          { name: "constructor", in: "query", schema: { type: "string" } },
          { name: "toString", in: "query", schema: { type: "string" } },
          { name: "valueOf", in: "header", schema: { type: "string" } },
          { name: "limit", in: "query", schema: { type: "integer" } },
        ],
        responses: { "200": { description: "ok" } },
      },
    },
    "/classes/{constructor}": {
      get: {
        operationId: "getClass",
        parameters: [{ name: "constructor", in: "path", required: true, schema: { type: "string" } }],
        responses: { "200": { description: "ok" } },
      },
    },
  },
};

type Problem = { errors?: Array<{ pointer: string; message: string }> };

describe.skipIf(!pg.available)(`tool arguments named like inherited properties${pg.reason}`, () => {
  let w: World;
  let upstream: LocalServer;
  let connectorId: string;
  const seen: Array<{ url: string; valueOf: string | undefined }> = [];

  beforeAll(async () => {
    w = await startWorld("connectors_inherited_arguments");
    upstream = await startLocalServer((req, res) => {
      seen.push({ url: req.url ?? "", valueOf: req.headers.valueof as string | undefined });
      res.writeHead(200, { "content-type": "application/json" });
      res.end("[]");
    });
    const created = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name: "objects",
      spec: SPEC,
      baseUrl: upstream.url,
    });
    expect(created.status, await created.clone().text()).toBe(201);
    connectorId = ((await created.json()) as { id: string }).id;
  }, 120_000);
  afterAll(async () => {
    await upstream?.close();
    await w?.close();
  });

  const call = (name: string, args: Record<string, unknown>) =>
    w.call("POST", `/v1/mcp-servers/${connectorId}/tools/call`, w.developer, { name, arguments: args });

  it("sends only the arguments given: none of the inherited ones", async () => {
    seen.length = 0;
    const res = await call("listItems", { limit: 2 });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(seen).toEqual([{ url: "/items?limit=2", valueOf: undefined }]);
    // Given, they are sent like any other.
    const given = await call("listItems", { constructor: "Point", toString: "short", valueOf: "raw" });
    expect(given.status, await given.clone().text()).toBe(200);
    expect(seen[1]).toEqual({ url: "/items?constructor=Point&toString=short", valueOf: "raw" });
  });

  it("a required one left out is missing (400 naming it), and nothing is sent", async () => {
    seen.length = 0;
    const res = await call("getClass", {});
    expect(res.status).toBe(400);
    const problem = (await res.json()) as Problem;
    expect(problem.errors).toEqual([
      { pointer: "/body/arguments/constructor", message: "must have required property 'constructor'" },
    ]);
    expect(seen).toEqual([]);
    const given = await call("getClass", { constructor: "Point" });
    expect(given.status).toBe(200);
    expect(seen).toEqual([{ url: "/classes/Point", valueOf: undefined }]);
  });
});
