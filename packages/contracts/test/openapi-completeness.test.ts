import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "../src/index.ts";

// biome-ignore lint/suspicious/noExplicitAny: walking a generated JSON document
type Json = any;

/** Every gap in the API reference, as `<where>: <what is missing>`. */
export function referenceGaps(doc: Json): string[] {
  const gaps: string[] = [];
  const seen = new Set<Json>();
  const walk = (schema: Json, where: string) => {
    if (!schema || typeof schema !== "object" || seen.has(schema)) return;
    seen.add(schema);
    for (const [name, prop] of Object.entries<Json>(schema.properties ?? {})) {
      if (!prop.description && !prop.$ref) gaps.push(`${where}.${name}: description`);
      walk(prop, `${where}.${name}`);
    }
    for (const key of ["items", "anyOf", "oneOf", "allOf", "additionalProperties"]) {
      const v = schema[key];
      if (Array.isArray(v)) {
        for (const [i, s] of v.entries()) walk(s, `${where}[${key}${i}]`);
      } else walk(v, `${where}[${key}]`);
    }
  };
  for (const [name, schema] of Object.entries<Json>(doc.components?.schemas ?? {})) walk(schema, `#/${name}`);
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const field of ["summary", "description", "operationId"]) if (!op[field]) gaps.push(`${at}: ${field}`);
      if (!op.tags?.length) gaps.push(`${at}: tags`);
      for (const p of op.parameters ?? []) if (!p.description) gaps.push(`${at} ${p.in} ${p.name}: description`);
      for (const media of Object.values<Json>(op.requestBody?.content ?? {})) walk(media.schema, `${at} body`);
      for (const [status, response] of Object.entries<Json>(op.responses ?? {})) {
        for (const media of Object.values<Json>(response.content ?? {})) walk(media.schema, `${at} ${status}`);
      }
    }
  }
  return gaps;
}

describe("the API reference is complete", () => {
  const doc = buildOpenApiDocument();

  it("gives every operation a summary, a description, an operationId and a tag, and describes every parameter and property", () => {
    expect(referenceGaps(doc)).toEqual([]);
  });

  it("would notice a gap", () => {
    const broken = structuredClone(doc);
    const [path, item] = Object.entries<Json>(broken.paths)[0] as [string, Json];
    const op = Object.values<Json>(item)[0];
    delete op.summary;
    expect(referenceGaps(broken).some((g) => g.endsWith(": summary") && g.includes(path))).toBe(true);
  });
});
