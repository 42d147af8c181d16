import { ALL_ROUTES } from "@agentplane/contracts";
import { describe, expect, it } from "vitest";
import { RouteTable } from "../src/route-table.ts";

function concrete(template: string): string {
  return template.replaceAll(/\{([^}]+)\}/g, (_, name: string) => `${name}-value`);
}

describe("route table from contracts", () => {
  const table = new RouteTable();

  it("matches every contract route to its own operation with its path parameters", () => {
    expect(ALL_ROUTES.length).toBeGreaterThan(0);
    for (const route of ALL_ROUTES) {
      const match = table.match(route.method.toUpperCase(), concrete(route.path));
      expect(match.kind, `${route.method} ${route.path}`).toBe("route");
      if (match.kind !== "route") continue;
      expect(match.entry.operationId).toBe(route.operationId);
      for (const [name, value] of Object.entries(match.params)) expect(value).toBe(`${name}-value`);
    }
  });

  it("lists the allowed methods for a known path with the wrong method", () => {
    const route = ALL_ROUTES[0]!;
    const path = concrete(route.path);
    const used = new Set(ALL_ROUTES.filter((r) => r.path === route.path).map((r) => r.method.toUpperCase()));
    const unused = ["GET", "POST", "PUT", "PATCH", "DELETE"].find((m) => !used.has(m))!;
    const match = table.match(unused, path);
    expect(match.kind).toBe("method-not-allowed");
    if (match.kind === "method-not-allowed") expect(match.allow).toEqual([...used].sort());
  });

  it("does not match unknown paths", () => {
    expect(table.match("GET", "/v1/nothing-here").kind).toBe("not-found");
    expect(table.match("GET", "/v2/orgs").kind).toBe("not-found");
  });
});
