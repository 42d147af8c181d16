// A fetched description's `servers[0].url` is the far side's words: one that is no URL, even
// relative to where the description came from, is a 400 naming the field, never a 500.
import { type LocalServer, requirePostgres, startLocalServer } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();

type Problem = { status: number; detail?: string; errors?: Array<{ pointer: string; message: string }> };

/** Serves, at `/<n>.json`, a description whose first server URL is `SERVER_URLS[n]`. */
const SERVER_URLS = ["//[oops", "//api.example.com:99999/v1", "//{stage}.example.com/v1", "//bad host/v1"];

describe.skipIf(!pg.available)(`a description's server URL that is no URL${pg.reason}`, () => {
  let w: World;
  let upstream: LocalServer;

  beforeAll(async () => {
    w = await startWorld("conn_server_urls");
    upstream = await startLocalServer((req, res) => {
      const index = Number(/^\/(\d+)\.json$/.exec(req.url ?? "")?.[1] ?? Number.NaN);
      const serverUrl = SERVER_URLS[index];
      if (serverUrl === undefined) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          openapi: "3.0.3",
          info: { title: "odd servers", version: "1" },
          servers: [{ url: serverUrl, variables: { stage: { default: "[" } } }],
          paths: { "/ping": { get: { operationId: "ping", responses: { "200": { description: "ok" } } } } },
        }),
      );
    });
  });
  afterAll(async () => {
    await w?.close();
    await upstream?.close();
  });

  it("is a 400 naming specUrl, on creation and preview, and nothing is created", async () => {
    for (const [index, serverUrl] of SERVER_URLS.entries()) {
      const specUrl = `${upstream.url}/${index}.json`;
      for (const [path, body] of [
        [`/v1/projects/${w.projectId}/mcp-servers/http`, { name: `odd-${index}`, specUrl }],
        [`/v1/projects/${w.projectId}/mcp-servers/discover/preview`, { specUrl }],
      ] as const) {
        const res = await w.call("POST", path, w.owner, body);
        const problem = (await res.json()) as Problem;
        expect(res.status, `${serverUrl} ${path}: ${JSON.stringify(problem)}`).toBe(400);
        expect(problem.errors?.map((e) => e.pointer)).toContain("/body/specUrl");
        expect(problem.detail).toMatch(/server URL/);
      }
    }
    const list = await w.call("GET", `/v1/projects/${w.projectId}/mcp-servers`, w.owner);
    expect(((await list.json()) as { items: unknown[] }).items).toEqual([]);
  });

  it("the same description with a base URL given is created: its servers are not read", async () => {
    const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name: "odd-with-base",
      specUrl: `${upstream.url}/0.json`,
      baseUrl: `${upstream.url}/v1`,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(((await res.json()) as { baseUrl?: string }).baseUrl).toBe(`${upstream.url}/v1`);
  });
});
