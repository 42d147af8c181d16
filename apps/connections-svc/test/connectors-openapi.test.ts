import { readFileSync } from "node:fs";
import { ProblemError } from "@agentplane/problem-details";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import {
  buildHttpRequest,
  buildToolsFromDocument,
  type ConnectorTool,
  defaultBaseUrl,
  loadOpenApiDescription,
  pathMatches,
} from "../src/connectors/openapi/index.ts";
import { generateLargeDescription } from "./connectors-fixtures/large-description.ts";

const fixture = (name: string) => readFileSync(new URL(`./connectors-fixtures/${name}`, import.meta.url), "utf8");
const byName = (tools: ConnectorTool[], name: string) => {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name} in ${tools.map((t) => t.name).join(", ")}`);
  return tool;
};
const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });

describe("OpenAPI descriptions become tools", () => {
  it("names tools from operationId or method and path, sanitized, ≤ 64, collisions suffixed by path order", async () => {
    const { document } = await loadOpenApiDescription(fixture("pets-3.0.yaml"));
    const { tools, warnings } = buildToolsFromDocument(document);
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        "createPet",
        "delete_pets_id",
        "getOwnerFamilyTreeWithAllRelativesAndTheirPetsIncludingArchivedR",
        "listPets",
        "pets_replace_v1",
        "pets_replace_v1_2",
      ].sort(),
    );
    // "/owners" sorts before "/pets/{id}", so it keeps the unsuffixed name whatever the document order.
    expect(byName(tools, "pets_replace_v1").operation?.path).toBe("/owners");
    expect(byName(tools, "pets_replace_v1_2").operation?.path).toBe("/pets/{id}");
    for (const t of tools) expect(t.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(warnings).toEqual([
      expect.objectContaining({ method: "put", path: "/pets/{id}/photo", operationId: "uploadPetPhoto" }),
    ]);
    expect(warnings[0]?.reason).toContain("image/png");

    const reordered = structuredClone(document) as typeof document;
    reordered.paths = Object.fromEntries(Object.entries(document.paths ?? {}).reverse());
    expect(buildToolsFromDocument(reordered).tools.map((t) => t.name)).toEqual(tools.map((t) => t.name));
  });

  it("merges path, query and header parameters with the JSON body, renaming clashes by location", async () => {
    const { document } = await loadOpenApiDescription(fixture("pets-3.0.yaml"));
    const { tools } = buildToolsFromDocument(document);
    const replace = byName(tools, "pets_replace_v1_2");
    expect(Object.keys(replace.inputSchema.properties as object).sort()).toEqual(
      ["X-Trace", "body_id", "name", "path_id"].sort(),
    );
    expect(replace.inputSchema.required).toEqual(["path_id", "body_id", "name"]);
    expect(replace.description).toBe("Replaces a pet; the body carries its own id.");
    expect(ajv.validate(replace.inputSchema, { path_id: 3, body_id: "x", name: "Rex" })).toBe(true);
    expect(ajv.validate(replace.inputSchema, { path_id: 3, name: "Rex" })).toBe(false);

    const request = buildHttpRequest(
      replace,
      { path_id: 3, body_id: "p-3", name: "Rex", "X-Trace": "t1" },
      "https://h.test/api/",
    );
    expect(request).toEqual({
      method: "PUT",
      url: "https://h.test/api/pets/3",
      headers: { accept: "application/json", "x-trace": "t1", "content-type": "application/json" },
      body: JSON.stringify({ id: "p-3", name: "Rex" }),
    });
    const list = buildHttpRequest(byName(tools, "listPets"), { species: "cat", tags: ["a b", "c"] }, "https://h.test");
    expect(list.url).toBe("https://h.test/pets?species=cat&tags=a+b%2Cc");
  });

  it("dereferences $refs, cuts cycles, drops read-only input properties and maps nullable", async () => {
    const { document } = await loadOpenApiDescription(fixture("pets-3.0.yaml"));
    const { tools } = buildToolsFromDocument(document);
    const create = byName(tools, "createPet");
    const props = create.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(props.id).toBeUndefined();
    expect(props.nickname).toEqual({ type: ["string", "null"] });
    const owner = props.owner as { properties: Record<string, { items: { description?: string } }> };
    expect(owner.properties.pets?.items.description).toMatch(/schema cut/);
    const tree = byName(tools, "getOwnerFamilyTreeWithAllRelativesAndTheirPetsIncludingArchivedR");
    expect(JSON.stringify(tree.outputSchema)).toContain("schema cut");
    expect(JSON.stringify(tools)).not.toContain("$ref");
    expect(defaultBaseUrl(document)).toBe("https://eu.pets.example.test/api");
  });

  it("reads OpenAPI 3.1 JSON with a +json body and an array body kept whole", async () => {
    const { document, sourceVersion } = await loadOpenApiDescription(fixture("notes-3.1.json"));
    expect(sourceVersion).toBe("3.1.0");
    const { tools } = buildToolsFromDocument(document);
    const update = byName(tools, "updateNote");
    expect(Object.keys(update.inputSchema.properties as object).sort()).toEqual(
      ["body", "body_title", "noteId", "query_title"].sort(),
    );
    expect(update.operation?.body).toEqual({
      contentType: "application/merge-patch+json",
      mode: "properties",
      required: true,
    });
    expect(update.outputSchema?.type).toBe("object");
    const create = byName(tools, "createNote");
    expect(create.inputSchema.required).toEqual(["body"]);
    expect((create.inputSchema.properties as Record<string, { type: string }>).body?.type).toBe("array");
    const built = buildHttpRequest(create, { body: [{ title: "a" }] }, "https://n.test");
    expect(built.body).toBe('[{"title":"a"}]');
  });

  it("converts Swagger 2.0 and takes the base URL from host and basePath", async () => {
    const { document, sourceVersion } = await loadOpenApiDescription(JSON.parse(fixture("inventory-swagger2.json")));
    expect(sourceVersion).toBe("2.0");
    const { tools } = buildToolsFromDocument(document);
    expect(tools.map((t) => t.name)).toEqual(["getItem", "restockItem"]);
    expect(byName(tools, "restockItem").inputSchema).toMatchObject({
      required: ["sku", "count"],
      properties: { count: { type: "integer", minimum: 1 } },
    });
    expect(defaultBaseUrl(document)).toBe("https://inventory.example.test/v1");
  });

  it("filters by tag, path glob and method", async () => {
    const { document } = await loadOpenApiDescription(fixture("pets-3.0.yaml"));
    const names = (opts: Parameters<typeof buildToolsFromDocument>[1]) =>
      buildToolsFromDocument(document, opts).tools.map((t) => t.name);
    expect(names({ include: { tags: ["owners"] } })).toHaveLength(2);
    expect(names({ include: { paths: ["/pets/*"] }, exclude: { methods: ["DELETE"] } })).toEqual(["pets_replace_v1_2"]);
    expect(names({ include: { paths: ["/owners/**"] } })).toEqual([
      "getOwnerFamilyTreeWithAllRelativesAndTheirPetsIncludingArchivedR",
    ]);
    expect(names({ exclude: { tags: ["pets"] } })).toHaveLength(2);
  });

  it("matches path globs by segment, in time linear in the path for any tenant pattern", () => {
    expect(pathMatches("/pets/*", "/pets/1")).toBe(true);
    expect(pathMatches("/pets/*", "/pets/1/toys")).toBe(false);
    expect(pathMatches("/pets/**", "/pets/1/toys")).toBe(true);
    expect(pathMatches("/*/toys", "/pets/toys")).toBe(true);
    expect(pathMatches("/p*s/{id}", "/pets/{id}")).toBe(true);
    expect(pathMatches("/pets.*", "/petsX")).toBe(false);
    expect(pathMatches("/a**b", "/a/x/b")).toBe(true);
    expect(pathMatches("/a*b", "/a/b")).toBe(false);
    expect(pathMatches("***", "/anything/at/all")).toBe(true);
    // As a RegExp this pattern backtracks for seconds on a 40-character path.
    const hostile = `/${"**a".repeat(8)}**b`;
    const started = performance.now();
    expect(pathMatches(hostile, `/${"a".repeat(40)}`)).toBe(false);
    expect(pathMatches(`/${"**a".repeat(166)}`, `/${"a".repeat(4000)}`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it("answers 400 with the parser's messages for an invalid description or unreadable text", async () => {
    const invalid = { openapi: "3.0.3", info: { title: "x" }, paths: {} };
    const error = await loadOpenApiDescription(invalid).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProblemError);
    expect((error as ProblemError).status).toBe(400);
    expect((error as ProblemError).errors?.[0]?.message).toContain("version");
    const syntax = await loadOpenApiDescription("openapi: [3.0\n  bad: {", { pointer: "/body/spec" }).catch(
      (e: unknown) => e,
    );
    expect((syntax as ProblemError).errors?.[0]?.pointer).toBe("/body/spec");
    const version = await loadOpenApiDescription({ openapi: "4.0.0", info: {}, paths: {} }).catch((e: unknown) => e);
    expect((version as ProblemError).errors?.[0]?.pointer).toBe("/spec/openapi");
  });

  it.each(["3.0.3", "3.1.0"] as const)(
    "builds 320 tools from a large %s description, JSON and YAML alike",
    async (version) => {
      const description = generateLargeDescription({ resources: 40, version });
      const fromJson = await loadOpenApiDescription(JSON.stringify(description));
      const fromYaml = await loadOpenApiDescription(stringify(description));
      const { tools, warnings } = buildToolsFromDocument(fromJson.document);
      expect(buildToolsFromDocument(fromYaml.document).tools).toEqual(tools);
      expect(tools).toHaveLength(40 * 8);
      expect(warnings).toHaveLength(4);
      expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
      expect(byName(tools, "post_accounts_accountId_archive").inputSchema.required).toEqual(["accountId"]);
      const list = byName(tools, "listAccounts");
      expect(list.outputSchema?.allOf).toBeDefined();
      for (const tool of tools) {
        expect(() => ajv.compile(tool.inputSchema)).not.toThrow();
        expect(tool.name.length).toBeLessThanOrEqual(64);
      }
      const nullableCursor = JSON.stringify(list.outputSchema);
      expect(nullableCursor).toContain('"nextCursor":{"type":["string","null"]}');
    },
  );
});
