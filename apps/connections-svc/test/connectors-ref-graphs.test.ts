// A description whose `$ref`s each refer twice to the next level is a few kilobytes, but unfolds
// into 2^levels nodes: once for the parser, which walks every path (on the event loop), and again
// for tool schemas copied out of it. Neither may grow with the unfolded size.
import { describe, expect, it } from "vitest";
import { loadOpenApiDescription } from "../src/connectors/openapi/load.ts";
import { MAX_UNFOLDED_NODES } from "../src/connectors/openapi/ref-unfolding.ts";
import { buildToolsFromDocument } from "../src/connectors/openapi/tools.ts";

/** Levels L1…Ldepth, each (an OpenAPI 3.1 schema) naming the next twice; `operations` bodies are L1. */
function doubling(depth: number, operations = 1) {
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

describe("descriptions whose $refs unfold exponentially", () => {
  it("are refused with a 400 before the parser walks them, at once", async () => {
    // Forty levels: 2^40 paths. Twenty-two already held the event loop for ten seconds.
    for (const depth of [22, 40]) {
      const started = performance.now();
      const error = await loadOpenApiDescription(doubling(depth)).catch((e: unknown) => e);
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(error).toMatchObject({
        status: 400,
        errors: [{ pointer: "/spec", message: `following its $refs gives more than ${MAX_UNFOLDED_NODES} nodes` }],
      });
    }
  });

  it("within the limit, build tools whose schemas are cut at a size, however much the graph unfolds", async () => {
    const loaded = await loadOpenApiDescription(doubling(15, 30));
    const { tools } = buildToolsFromDocument(loaded.document);
    expect(tools).toHaveLength(30);
    // Unfolded, each tool's body schema alone is about a megabyte.
    expect(JSON.stringify(tools).length).toBeLessThan(2_000_000);
  });
});
