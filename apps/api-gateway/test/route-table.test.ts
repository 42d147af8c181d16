import { ALL_ROUTES, type ContractRoute } from "@agentplane/contracts";
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

  it("finds templates that do not begin with two literal segments beside those that do, most literal first", () => {
    const route = (method: string, path: string, operationId: string) =>
      ({ method, path, operationId, "x-service": "tenancy", "x-access": "authenticated" }) as unknown as ContractRoute;
    const custom = new RouteTable([
      route("get", "/v1/teams/{teamId}", "getTeam"),
      route("get", "/v1/teams/mine", "myTeams"),
      route("get", "/v1/teams/{teamId}/members", "members"),
      route("get", "/{tenant}/teams/{teamId}", "tenantTeam"),
      route("post", "/v1/{kind}/batch", "batch"),
      route("get", "/v1", "root"),
    ]);
    const op = (method: string, path: string) => {
      const m = custom.match(method, path);
      return m.kind === "route" ? m.entry.operationId : m.kind;
    };
    expect(op("GET", "/v1/teams/mine")).toBe("myTeams");
    expect(op("GET", "/v1/teams/t1")).toBe("getTeam");
    expect(op("GET", "/v1/teams/t1/members/")).toBe("members");
    expect(op("GET", "/acme/teams/t1")).toBe("tenantTeam");
    expect(op("POST", "/v1/teams/batch")).toBe("batch");
    expect(op("POST", "/v1/other/batch")).toBe("batch");
    expect(op("GET", "/v1")).toBe("root");
    expect(op("GET", "/v2/teams/t1")).toBe("tenantTeam");
    expect(op("DELETE", "/v1/teams/t1")).toBe("method-not-allowed");
    expect(op("GET", "/v1/nothing/here/at/all")).toBe("not-found");
  });
});
