import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { errorResponses } from "@agentplane/problem-details";
import { describe, expect, it } from "vitest";
import * as contracts from "../src/index.ts";
import { ALL_INTERNAL_ROUTES } from "../src/index.ts";
import { defineRuntimeRoute } from "../src/runtime/define-route.ts";
import * as runtime from "../src/runtime/index.ts";

interface Contract {
  operationId: string;
  method: string;
  path: string;
  "x-internal"?: true;
}

const isContract = (value: unknown): value is Contract =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as Contract).operationId === "string" &&
  typeof (value as Contract).path === "string" &&
  typeof (value as Contract).method === "string";

/** Every route contract a module exports, with the name it is exported under. */
const exportedContracts = (module: Record<string, unknown>) =>
  Object.entries(module).filter((entry): entry is [string, Contract] => isContract(entry[1]));

describe("route contracts are exported by name", () => {
  it("names each `/v1` contract `<operationId>Route`", () => {
    const routes = exportedContracts(contracts).filter(([, route]) => !route["x-internal"]);
    expect(routes.length).toBeGreaterThan(100);
    const misnamed = routes.filter(([name, route]) => name !== `${route.operationId}Route`).map(([name]) => name);
    expect(misnamed).toEqual([]);
  });

  it("names each internal contract `<operationId>Route`", () => {
    const internal = exportedContracts(contracts).filter(([, route]) => route["x-internal"]);
    expect(internal.length).toBeGreaterThan(0);
    const misnamed = internal.filter(([name, route]) => name !== `${route.operationId}Route`).map(([name]) => name);
    expect(misnamed).toEqual([]);
  });

  it("lists every exported internal contract once in ALL_INTERNAL_ROUTES, and nothing else", () => {
    const exported = exportedContracts(contracts)
      .filter(([, route]) => route["x-internal"])
      .map(([, route]) => route);
    expect(new Set(ALL_INTERNAL_ROUTES).size).toBe(ALL_INTERNAL_ROUTES.length);
    expect(new Set(ALL_INTERNAL_ROUTES)).toEqual(new Set(exported));
  });
});

describe("agent runtime contracts", () => {
  it("names each runtime contract `<operationId>Route`", () => {
    const routes = exportedContracts(runtime);
    expect(routes.length).toBeGreaterThan(0);
    const misnamed = routes.filter(([name, route]) => name !== `${route.operationId}Route`).map(([name]) => name);
    expect(misnamed).toEqual([]);
  });

  it("adds the named shared problems, keeps a response the route lists itself, and adds nothing else", () => {
    const own = { description: "Model call failed", content: {} };
    const route = defineRuntimeRoute(
      { errors: [404, 400] },
      { method: "get", path: "/agents/x", operationId: "x", responses: { 200: { description: "ok" }, 404: own } },
    );
    expect(Object.keys(route)).toEqual(["method", "path", "operationId", "responses"]);
    expect(Object.keys(route.responses)).toEqual(["200", "400", "404"]);
    expect(route.responses[400]).toBe(errorResponses[400]);
    expect(route.responses[404]).toBe(own);
  });
});

describe("one way to define a contract", () => {
  it("no contract calls createRoute directly: defineRoute, defineInternalRoute or defineRuntimeRoute", () => {
    const src = join(import.meta.dirname, "..", "src");
    const direct = readdirSync(src, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts"))
      .filter((file) => /\bcreateRoute\(/.test(readFileSync(join(src, file), "utf8")));
    expect(direct).toEqual([]);
  });
});
