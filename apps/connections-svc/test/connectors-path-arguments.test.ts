import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();

const SPEC = {
  openapi: "3.0.3",
  info: { title: "repos", version: "1" },
  paths: {
    "/repos/{owner}/{repo}/issues": {
      get: {
        operationId: "listIssues",
        parameters: [
          { name: "owner", in: "path", required: true, schema: { type: "string" } },
          { name: "repo", in: "path", required: true, schema: { type: "string" } },
          { name: "state", in: "query", schema: { type: "string" } },
        ],
        responses: { "200": { description: "ok" } },
      },
    },
    "/files/{dir}{name}": {
      get: {
        operationId: "readFile",
        parameters: [
          { name: "dir", in: "path", required: true, schema: { type: "string" } },
          { name: "name", in: "path", required: true, schema: { type: "string" } },
        ],
        responses: { "200": { description: "ok" } },
      },
    },
  },
};

describe.skipIf(!pg.available)(`an HTTP connector's path arguments${pg.reason}`, () => {
  let w: World;
  let upstream: Server;
  let origin = "";
  const seen: string[] = [];

  beforeAll(async () => {
    w = await startWorld("connectors_path_arguments");
    upstream = createServer((req, res) => {
      seen.push(req.url ?? "");
      res.writeHead(200, { "content-type": "application/json" });
      res.end("[]");
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  }, 120_000);
  afterAll(async () => {
    upstream?.close();
    await w?.close();
  });

  it("refuses arguments that would walk out of the operation's path, and keeps the base URL's query", async () => {
    const created = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name: "repos",
      spec: SPEC,
      baseUrl: `${origin}/api/v3?tenant=acme`,
      credentialId: w.credentialId,
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const call = (name: string, args: Record<string, string>) =>
      w.call("POST", `/v1/mcp-servers/${id}/tools/call`, w.developer, { name, arguments: args });

    const refused: [string, Record<string, string>, string[]][] = [
      ["listIssues", { owner: "..", repo: ".." }, ["owner", "repo"]],
      ["listIssues", { owner: "acme", repo: "." }, ["repo"]],
      ["listIssues", { owner: "", repo: "widgets" }, ["owner"]],
      // Two arguments that make `..` together in one segment.
      ["readFile", { dir: ".", name: "." }, ["dir", "name"]],
    ];
    for (const [name, args, pointers] of refused) {
      const res = await call(name, args);
      expect(res.status, JSON.stringify(args)).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      const problem = (await res.json()) as { errors: { pointer: string; message: string }[] };
      expect(problem.errors.map((e) => e.pointer).sort()).toEqual(pointers.map((p) => `/body/arguments/${p}`).sort());
    }
    expect(seen).toEqual([]);

    // Dots inside a segment, and encoded ones, are names like any other.
    const sent = await call("listIssues", { owner: "a..b", repo: "%2e%2e", state: "open" });
    expect(sent.status, await sent.clone().text()).toBe(200);
    expect(seen).toEqual(["/api/v3/repos/a..b/%252e%252e/issues?tenant=acme&state=open"]);
  });
});
