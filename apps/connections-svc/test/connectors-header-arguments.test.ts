import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();

const SPEC = {
  openapi: "3.0.3",
  info: { title: "traced", version: "1" },
  paths: {
    "/echo": {
      get: {
        operationId: "echo",
        parameters: [{ name: "X-Trace", in: "header", schema: { type: "string" } }],
        responses: { "200": { description: "ok" } },
      },
    },
  },
};

describe.skipIf(!pg.available)(`an HTTP connector's header arguments${pg.reason}`, () => {
  let w: World;
  let upstream: Server;
  let baseUrl = "";
  const seen: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    w = await startWorld("connectors_header_arguments");
    upstream = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  }, 120_000);
  afterAll(async () => {
    upstream?.close();
    await w?.close();
  });

  it("refuses a value no header can carry with a 400 naming the argument, and sends the rest", async () => {
    const created = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name: "traced",
      spec: SPEC,
      baseUrl,
      credentialId: w.credentialId,
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const call = (value: string) =>
      w.call("POST", `/v1/mcp-servers/${id}/tools/call`, w.developer, {
        name: "echo",
        arguments: { "X-Trace": value },
      });

    for (const value of ["a\r\nInjected: 1", "a\nb", "a\rb"]) {
      const res = await call(value);
      expect(res.status, JSON.stringify(value)).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      const problem = (await res.json()) as { errors: { pointer: string; message: string }[] };
      expect(problem.errors).toEqual([
        { pointer: "/body/arguments/X-Trace", message: expect.stringContaining("line break") },
      ]);
    }
    expect(seen).toEqual([]);

    const sent = await call("trace-1");
    expect(sent.status).toBe(200);
    expect(seen.map((h) => h["x-trace"])).toEqual(["trace-1"]);
  });
});
