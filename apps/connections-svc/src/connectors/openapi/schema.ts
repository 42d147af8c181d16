/** A JSON Schema object as tools carry it (plain data, no cycles, no `$ref`). */
export type JsonSchema = Record<string, unknown>;

/** Keywords whose value is a map of subschemas, a subschema, or a list of subschemas. */
export const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
export const SCHEMA_VALUES = new Set([
  "additionalProperties",
  "items",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedProperties",
  "unevaluatedItems",
  "additionalItems",
]);
export const SCHEMA_LISTS = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
/** OpenAPI-only keywords or annotations that JSON Schema validators do not need. */
const DROPPED = new Set([
  "nullable",
  "discriminator",
  "xml",
  "externalDocs",
  "example",
  "$schema",
  "$id",
  "$anchor",
  "$dynamicRef",
  "$dynamicAnchor",
  "$ref",
  "$comment",
]);

const MAX_DEPTH = 24;
const MAX_NODES = 5_000;
/** Nodes all the schemas built from one description may hold together (see `SchemaBudget`). */
export const MAX_DOCUMENT_NODES = 250_000;

export type SchemaMode = "input" | "output";

/**
 * What is left to build for one description. A dereferenced `$ref` graph shares its objects, so a
 * few kilobytes of description in which each level refers twice to the next unfold into 2^levels
 * nodes when copied: every node built, schema or annotation value, counts against the schema's
 * own cap and against the description's, and a schema past either is cut.
 */
export interface SchemaBudget {
  left: number;
}

export function schemaBudget(nodes = MAX_DOCUMENT_NODES): SchemaBudget {
  return { left: nodes };
}

interface WalkState {
  ancestors: Set<object>;
  nodes: number;
  cut: boolean;
  budget: SchemaBudget;
}

/** Thrown by `plainCopy` past the caps: the annotation is left out (a wider schema, never a wrong one). */
class CopyCut extends Error {}

/** Counts one built node; false once the schema's or the description's cap is spent. */
function spend(state: WalkState): boolean {
  if (state.nodes >= MAX_NODES || state.budget.left <= 0) return false;
  state.nodes++;
  state.budget.left--;
  return true;
}

/**
 * Converts a dereferenced OpenAPI schema into a self-contained JSON Schema: object cycles left by
 * `$ref` cycles are cut (the recursive position accepts any value), `nullable` becomes a `null`
 * type, read-only properties leave input schemas and write-only ones leave output schemas. Depth and
 * size are capped so one pathological description cannot produce a huge tool.
 */
export function toJsonSchema(
  schema: unknown,
  mode: SchemaMode,
  budget: SchemaBudget = schemaBudget(),
): { schema: JsonSchema; cut: boolean } {
  const state: WalkState = { ancestors: new Set(), nodes: 0, cut: false, budget };
  const converted = walk(schema, mode, state, 0);
  return { schema: typeof converted === "boolean" ? (converted ? {} : { not: {} }) : converted, cut: state.cut };
}

function walk(schema: unknown, mode: SchemaMode, state: WalkState, depth: number): JsonSchema | boolean {
  if (typeof schema === "boolean") return schema;
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return {};
  if (state.ancestors.has(schema) || depth > MAX_DEPTH || !spend(state)) {
    state.cut = true;
    return { description: "Recursive or deeply nested value (schema cut)" };
  }
  state.ancestors.add(schema);
  const source = schema as Record<string, unknown>;
  const out: JsonSchema = {};
  const removed = new Set<string>();
  for (const [key, value] of Object.entries(source)) {
    if (DROPPED.has(key) || key.startsWith("x-")) continue;
    if (SCHEMA_MAPS.has(key) && value && typeof value === "object") {
      const map: Record<string, unknown> = {};
      for (const [name, sub] of Object.entries(value as Record<string, unknown>)) {
        if (key === "properties" && sub && typeof sub === "object") {
          const flags = sub as { readOnly?: boolean; writeOnly?: boolean };
          if ((mode === "input" && flags.readOnly) || (mode === "output" && flags.writeOnly)) {
            removed.add(name);
            continue;
          }
        }
        map[name] = walk(sub, mode, state, depth + 1);
      }
      out[key] = map;
    } else if (SCHEMA_VALUES.has(key)) {
      out[key] = Array.isArray(value)
        ? value.map((v) => walk(v, mode, state, depth + 1))
        : walk(value, mode, state, depth + 1);
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map((v) => walk(v, mode, state, depth + 1));
    } else {
      try {
        out[key] = plainCopy(value, state);
      } catch (error) {
        if (!(error instanceof CopyCut)) throw error;
        state.cut = true;
      }
    }
  }
  if (removed.size > 0 && Array.isArray(out.required)) {
    out.required = (out.required as string[]).filter((name) => !removed.has(name));
  }
  if (source.nullable === true) addNull(out);
  state.ancestors.delete(schema);
  return out;
}

function addNull(out: JsonSchema): void {
  if (typeof out.type === "string") out.type = [out.type, "null"];
  else if (Array.isArray(out.type) && !out.type.includes("null")) out.type = [...out.type, "null"];
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
}

/**
 * Copies annotation values (enum, default, examples): JSON data only, cycles dropped; each object
 * or array copied is a node of the caps (past them, `CopyCut`).
 */
function plainCopy(value: unknown, state: WalkState, seen: Set<object> = new Set()): unknown {
  if (value === null || typeof value !== "object") return value;
  if (seen.has(value)) return null;
  if (seen.size > MAX_DEPTH || !spend(state)) throw new CopyCut();
  seen.add(value);
  const copy = Array.isArray(value)
    ? value.map((v) => plainCopy(v, state, seen))
    : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plainCopy(v, state, seen)]));
  seen.delete(value);
  return copy;
}

/** True when the schema is a plain object whose properties can be merged into a tool's arguments. */
export function isMergeableObject(schema: JsonSchema): boolean {
  if (schema.allOf || schema.anyOf || schema.oneOf || schema.not || schema.if) return false;
  const type = schema.type;
  const objectType = type === "object" || (type === undefined && schema.properties !== undefined);
  return objectType && !!schema.properties && typeof schema.properties === "object";
}
