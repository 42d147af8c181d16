// A description just within the `$ref` bound (decision 0046) takes about a second of a core to
// validate, dereference and turn into tools. That runs on a thread of its own: meanwhile the service
// answers other requests, and an invalid description is the same 400 problem as when it was parsed
// in the request's own thread.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { ProblemError } from "@agentplane/problem-details";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DescriptionParser } from "../src/connectors/openapi/description-parser.ts";
import { loadOpenApiDescription } from "../src/connectors/openapi/load.ts";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();

/** Levels L1…Ldepth, each naming the next twice: 2^depth nodes unfolded, within the bound at 17. */
function doubling(depth: number, operations: number) {
  const schemas: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) {
    schemas[`L${i}`] = {
      type: "object",
      "vendor-a": { $ref: `#/components/schemas/L${i + 1}` },
      "vendor-b": { $ref: `#/components/schemas/L${i + 1}` },
    };
  }
  schemas[`L${depth}`] = { type: "string" };
  const paths: Record<string, unknown> = {};
  for (let n = 0; n < operations; n++) {
    paths[`/op${n}`] = {
      post: {
        operationId: `op${n}`,
        requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/L1" } } } },
        responses: { "200": { description: "ok" } },
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: { title: "doubling", version: "1" },
    servers: [{ url: "https://api.example.test" }],
    paths,
    components: { schemas },
  };
}

describe.skipIf(!pg.available)(`OpenAPI descriptions parsed off the event loop${pg.reason}`, () => {
  let w: World;
  const preview = (projectId: string, spec: unknown) =>
    w.call("POST", `/v1/projects/${projectId}/mcp-servers/discover/preview`, w.owner, { spec });

  beforeAll(async () => {
    w = await startWorld("connectors_parse_thread");
    // The thread started and the parser loaded once, so the measurement below is the parse alone.
    expect((await preview(w.projectId, doubling(3, 1))).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });

  it("answers other requests promptly while a heavy description is parsed", async () => {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const started = performance.now();
    let parsedAt = 0;
    // Eight operations over the deepest schema the bound allows: a few hundred ms even on a fast core.
    const heavy = preview(w.projectId, doubling(17, 8)).then((res) => {
      parsedAt = performance.now();
      return res;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const listStarted = performance.now();
    const list = await w.call("GET", `/v1/projects/${w.projectId}/mcp-servers`, w.owner);
    const listMs = performance.now() - listStarted;
    const res = await heavy;
    delay.disable();
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as { tools: unknown[] }).tools).toHaveLength(8);
    expect(list.status).toBe(200);
    // The parse took a while (well past the list's start at 50 ms), and the list was answered
    // while it ran, without waiting for it.
    expect(parsedAt - started).toBeGreaterThan(150);
    expect(listStarted + listMs).toBeLessThan(parsedAt);
    expect(listMs).toBeLessThan(250);
    // On the event loop the parse held it for half a second and more.
    expect(delay.max / 1e6).toBeLessThan(200);
  });

  it("answers an invalid description with the problem the parser gives it", async () => {
    const invalid: unknown[] = [
      { openapi: "3.0.3", info: { title: "x" }, paths: {} },
      { openapi: "4.0.0", info: { title: "x", version: "1" }, paths: {} },
      "openapi: [3.0\n  bad: {",
      '{"openapi": "3.0.3",',
      doubling(40, 1),
      { swagger: "2.0", info: { title: "x", version: "1" }, paths: { "/a": { get: { responses: 7 } } } },
    ];
    for (const spec of invalid) {
      const direct = await loadOpenApiDescription(spec as never, { pointer: "/body/spec" }).catch((e: unknown) => e);
      expect(direct).toBeInstanceOf(ProblemError);
      const res = await preview(w.projectId, spec);
      const { instance: _i, requestId: _r, ...problem } = (await res.json()) as Record<string, unknown>;
      expect(res.status, JSON.stringify(spec).slice(0, 80)).toBe((direct as ProblemError).status);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(problem).toEqual((direct as ProblemError).toBody());
    }
  });

  it("refuses past its queue with a 503 and Retry-After, and replaces a thread that overruns", async () => {
    const parser = new DescriptionParser({ maxWaiting: 1, timeoutMs: 150 });
    try {
      const heavy = { input: doubling(17, 4), pointer: "/body/spec" };
      const first = parser.parse(heavy).catch((e: unknown) => e);
      const second = parser.parse(heavy).catch((e: unknown) => e);
      const refused = await parser.parse(heavy).catch((e: unknown) => e);
      expect(refused).toMatchObject({ status: 503, headers: { "retry-after": "2" } });
      expect(await first).toMatchObject({ status: 503, detail: expect.stringContaining("longer than 150 ms") });
      expect(await second).toMatchObject({ status: 503 });
      // The overrunning thread is gone; the next parse starts another.
      expect(parser.running).toBe(false);
      const next = parser.parse({ input: doubling(3, 1), pointer: "/body/spec" }).catch(() => undefined);
      expect(parser.running).toBe(true);
      await next;
    } finally {
      await parser.close();
    }
  });
});
