import { validate } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import { ALL_ROUTES, buildOpenApiDocument, PERMISSIONS } from "../src/index.ts";

describe("OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 description according to a real validator", async () => {
    const doc = buildOpenApiDocument({ serverUrl: "https://agentplane.example" });
    expect(doc.openapi).toBe("3.1.0");
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, JSON.stringify((result as { errors?: unknown }).errors ?? [], null, 2)).toBe(true);
  });

  it("describes every contract route once, with its operation id, permission and problem responses", () => {
    const doc = buildOpenApiDocument() as unknown as { paths: Record<string, Record<string, Record<string, unknown>>> };
    const ids = new Set<string>();
    for (const route of ALL_ROUTES) {
      const op = doc.paths[route.path]?.[route.method];
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      expect(op!.operationId).toBe(route.operationId);
      expect(ids.has(route.operationId), `duplicate operationId ${route.operationId}`).toBe(false);
      ids.add(route.operationId);
      const access = route["x-permission"];
      expect(op!["x-permission"]).toBe(access);
      if (access !== "public" && access !== "authenticated") expect(PERMISSIONS[access]).toBeDefined();
      expect(Object.keys(op!.responses as object)).toContain("401");
    }
  });
});
