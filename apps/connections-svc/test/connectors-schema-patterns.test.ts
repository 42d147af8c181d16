// A tool's input schema is the tenant's (an OpenAPI description, or whatever a remote MCP server
// lists), and so are the arguments checked against it. A `pattern` that backtracks exponentially
// (`^(a+)+$`) must not let one call hold the service's event loop, which every tenant shares
// (decision 0044: the platform never runs a tenant's regular expression; the far side checks it).
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();

/** With a backtracking engine this input takes tens of seconds to refuse (it doubles per `a`). */
const EVIL_INPUT = `${"a".repeat(28)}!`;

const SPEC = {
  openapi: "3.0.3",
  info: { title: "patterns", version: "1" },
  // Never reached: the arguments are refused before any call.
  servers: [{ url: "http://127.0.0.1:9" }],
  paths: {
    "/find": {
      get: {
        operationId: "find",
        parameters: [{ name: "q", in: "query", required: true, schema: { type: "string", pattern: "^(a+)+$" } }],
        responses: { "200": { description: "ok" } },
      },
    },
  },
};

describe.skipIf(!pg.available)(`tenant regular expressions in tool schemas${pg.reason}`, () => {
  let w: World;
  let connectorId = "";

  beforeAll(async () => {
    w = await startWorld("connectors_schema_patterns");
    const created = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name: "patterns",
      spec: SPEC,
    });
    expect(created.status, await created.clone().text()).toBe(201);
    connectorId = ((await created.json()) as { id: string }).id;
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });

  it("never runs a tenant's pattern: the arguments go on at once, for the far side to check", async () => {
    const started = performance.now();
    const res = await w.call("POST", `/v1/mcp-servers/${connectorId}/tools/call`, w.developer, {
      name: "find",
      arguments: { q: EVIL_INPUT },
    });
    const elapsed = performance.now() - started;
    const body = (await res.json()) as { reason?: string };
    expect(elapsed).toBeLessThan(3_000);
    // The far side was asked (and, here, refuses the connection): no 400 of the platform's own.
    expect([res.status, body.reason]).toEqual([502, "unreachable"]);
    // The rest of the schema is still checked here.
    const wrongType = await w.call("POST", `/v1/mcp-servers/${connectorId}/tools/call`, w.developer, {
      name: "find",
      arguments: { q: 42, extra: { nested: { pattern: "x" } } },
    });
    const problem = (await wrongType.json()) as { errors?: Array<{ pointer: string }> };
    expect(wrongType.status).toBe(400);
    expect(problem.errors?.map((e) => e.pointer)).toEqual(["/body/arguments/q"]);
  });
});

describe("the schema the platform checks arguments against", () => {
  it("drops only the regex keywords, and what they would make extra", async () => {
    const { withoutRegexKeywords } = await import("../src/connectors/services/regex-free-schema.ts");
    const schema = JSON.parse(`{
      "type": "object",
      "properties": {
        "pattern": { "type": "string", "pattern": "^(a+)+$" },
        "__proto__": { "type": "number" },
        "tags": { "type": "array", "items": [{ "type": "string", "pattern": "x+" }] }
      },
      "patternProperties": { "^x-": { "type": "string" } },
      "additionalProperties": false,
      "propertyNames": { "pattern": "^[a-z-]+$" },
      "required": ["pattern"]
    }`);
    expect(withoutRegexKeywords(schema)).toEqual({
      type: "object",
      properties: {
        pattern: { type: "string" },
        ["__proto__"]: { type: "number" },
        tags: { type: "array", items: [{ type: "string" }] },
      },
      propertyNames: {},
      required: ["pattern"],
    });
    expect(Object.hasOwn((withoutRegexKeywords(schema) as { properties: object }).properties, "__proto__")).toBe(true);
  });
});
