import { describe, expect, it } from "vitest";
import * as contracts from "../src/index.ts";
import { ALL_INTERNAL_ROUTES } from "../src/index.ts";

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
