import { type OperationFilter, selectOperation } from "./filter.ts";
import type { OpenApiDocument } from "./load.ts";
import { NameAllocator, nameFromMethodAndPath, sanitizeToolName } from "./names.ts";
import { isMergeableObject, type JsonSchema, type SchemaBudget, schemaBudget, toJsonSchema } from "./schema.ts";

export const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;
export type ArgLocation = "path" | "query" | "header" | "body";

/** Where one tool argument goes in the HTTP request. */
export interface ArgBinding {
  arg: string;
  in: ArgLocation;
  /** The parameter or body property name on the wire. */
  name: string;
  style?: string;
  explode?: boolean;
}

export interface HttpOperation {
  method: string;
  path: string;
  args: ArgBinding[];
  /** `properties`: body properties are top-level arguments; `whole`: the body is the argument `bodyArg`. */
  body?: { contentType: string; mode: "properties" | "whole"; bodyArg?: string; required: boolean };
}

export interface ConnectorTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  /** Present for HTTP connector tools: how a call becomes a request. */
  operation?: HttpOperation;
}

export interface SkippedOperation {
  method: string;
  path: string;
  operationId?: string;
  reason: string;
}

export interface BuildResult {
  tools: ConnectorTool[];
  /** Operations that became no tool (or a reduced one), and why. */
  warnings: SkippedOperation[];
}

export interface BuildOptions {
  include?: OperationFilter | undefined;
  exclude?: OperationFilter | undefined;
}

interface RawParameter {
  name?: string;
  in?: string;
  required?: boolean;
  description?: string;
  schema?: unknown;
  content?: Record<string, { schema?: unknown }>;
  style?: string;
  explode?: boolean;
}

interface RawOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: RawParameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

interface Entry {
  in: ArgLocation;
  name: string;
  schema: JsonSchema;
  required: boolean;
  style?: string | undefined;
  explode?: boolean | undefined;
}

/** Headers OpenAPI says parameters cannot set; the connector owns them. */
const RESERVED_HEADERS = new Set(["accept", "content-type", "authorization"]);
const MAX_DESCRIPTION = 4_000;

/**
 * Every selected operation of a dereferenced description becomes a tool. Operations are visited in
 * (path, method) order so names, and suffixes for colliding names, do not depend on document order.
 */
export function buildToolsFromDocument(document: OpenApiDocument, options: BuildOptions = {}): BuildResult {
  const tools: ConnectorTool[] = [];
  const warnings: SkippedOperation[] = [];
  const names = new NameAllocator();
  // One budget for every schema of the description (a `$ref` graph can unfold exponentially).
  const budget = schemaBudget();
  const paths = document.paths ?? {};
  for (const path of Object.keys(paths).sort()) {
    const item = (paths[path] ?? {}) as Record<string, unknown>;
    const shared = Array.isArray(item.parameters) ? (item.parameters as RawParameter[]) : [];
    for (const method of HTTP_METHODS) {
      const op = item[method] as RawOperation | undefined;
      if (!op || typeof op !== "object") continue;
      const tags = Array.isArray(op.tags) ? op.tags : [];
      // Names are handed out over every operation, so filters never rename the tools they keep.
      const base = op.operationId ? sanitizeToolName(op.operationId) : nameFromMethodAndPath(method, path);
      const name = names.allocate(base);
      if (!selectOperation({ method, path, tags }, options.include, options.exclude)) continue;
      const skip = (reason: string) =>
        warnings.push({ method, path, ...(op.operationId ? { operationId: op.operationId } : {}), reason });
      const built = buildTool(method, path, op, shared, skip, budget);
      if (built) tools.push({ name, ...built });
    }
  }
  return { tools, warnings };
}

function buildTool(
  method: string,
  path: string,
  op: RawOperation,
  shared: RawParameter[],
  skip: (reason: string) => void,
  budget: SchemaBudget,
): Omit<ConnectorTool, "name"> | undefined {
  const entries: Entry[] = [];
  const params = new Map<string, RawParameter>();
  for (const p of [...shared, ...(op.parameters ?? [])]) if (p?.name && p.in) params.set(`${p.in}:${p.name}`, p);
  // Recursive positions are cut silently: the schema says so in the cut position's description.
  const convert = (schema: unknown, mode: "input" | "output") => toJsonSchema(schema, mode, budget).schema;
  for (const p of params.values()) {
    const location = p.in as string;
    if (location === "cookie") {
      if (p.required) {
        skip(`required cookie parameter ${p.name} is not supported`);
        return undefined;
      }
      continue;
    }
    if (location === "header" && RESERVED_HEADERS.has((p.name as string).toLowerCase())) continue;
    if (location !== "path" && location !== "query" && location !== "header") continue;
    const rawSchema = p.schema ?? Object.values(p.content ?? {})[0]?.schema ?? { type: "string" };
    const schema = convert(rawSchema, "input");
    if (p.description && schema.description === undefined) schema.description = p.description;
    entries.push({
      in: location,
      name: p.name as string,
      schema,
      required: location === "path" || p.required === true,
      style: p.style,
      explode: p.explode,
    });
  }
  let body: HttpOperation["body"];
  if (op.requestBody?.content) {
    const content = op.requestBody.content;
    const contentType = pickMediaType(Object.keys(content), true);
    const required = op.requestBody.required === true;
    if (!contentType) {
      const types = Object.keys(content).join(", ");
      if (required) {
        skip(`request body ${types} is neither JSON nor form-encoded`);
        return undefined;
      }
      skip(`optional request body ${types} is neither JSON nor form-encoded; the tool sends none`);
    } else {
      const schema = convert(content[contentType]?.schema ?? {}, "input");
      if (isMergeableObject(schema)) {
        const requiredProps = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
        for (const [name, sub] of Object.entries(schema.properties as Record<string, JsonSchema>)) {
          entries.push({ in: "body", name, schema: sub, required: required && requiredProps.has(name) });
        }
        body = { contentType, mode: "properties", required };
      } else {
        entries.push({ in: "body", name: "body", schema, required });
        body = { contentType, mode: "whole", bodyArg: "body", required };
      }
    }
  }
  const args = assignArgumentNames(entries);
  const properties: Record<string, JsonSchema> = {};
  const requiredArgs: string[] = [];
  const bindings: ArgBinding[] = [];
  entries.forEach((entry, i) => {
    const arg = args[i] as string;
    properties[arg] = entry.schema;
    if (entry.required) requiredArgs.push(arg);
    bindings.push({
      arg,
      in: entry.in,
      name: entry.name,
      ...(entry.style ? { style: entry.style } : {}),
      ...(entry.explode !== undefined ? { explode: entry.explode } : {}),
    });
    if (body?.mode === "whole" && entry.in === "body") body.bodyArg = arg;
  });
  const inputSchema: JsonSchema = { type: "object", properties };
  if (requiredArgs.length) inputSchema.required = requiredArgs;
  const outputSchema = pickOutputSchema(op, convert);
  const text = [op.summary, op.description].filter((s): s is string => !!s?.trim()).join("\n\n");
  return {
    description: (text || `${method.toUpperCase()} ${path}`).slice(0, MAX_DESCRIPTION),
    inputSchema,
    ...(outputSchema ? { outputSchema } : {}),
    operation: { method, path, args: bindings, ...(body ? { body } : {}) },
  };
}

/** Names used in more than one location are renamed `<location>_<name>` (then suffixed if still taken). */
function assignArgumentNames(entries: Entry[]): string[] {
  const counts = new Map<string, number>();
  for (const e of entries) counts.set(e.name, (counts.get(e.name) ?? 0) + 1);
  const taken = new Set(entries.filter((e) => counts.get(e.name) === 1).map((e) => e.name));
  return entries.map((e) => {
    if (counts.get(e.name) === 1) return e.name;
    let candidate = `${e.in}_${e.name}`;
    for (let n = 2; taken.has(candidate); n++) candidate = `${e.in}_${e.name}_${n}`;
    taken.add(candidate);
    return candidate;
  });
}

function pickMediaType(types: string[], allowForm: boolean): string | undefined {
  const base = (t: string) => t.split(";")[0]?.trim().toLowerCase() ?? "";
  return (
    types.find((t) => base(t) === "application/json") ??
    types.find((t) => /^application\/[\w.+-]*\+json$/.test(base(t))) ??
    types.find((t) => base(t) === "*/*" || base(t) === "application/*") ??
    (allowForm ? types.find((t) => base(t) === "application/x-www-form-urlencoded") : undefined)
  );
}

function pickOutputSchema(
  op: RawOperation,
  convert: (schema: unknown, mode: "input" | "output") => JsonSchema,
): JsonSchema | undefined {
  const responses = op.responses ?? {};
  const codes = Object.keys(responses)
    .filter((code) => /^2(\d\d|XX)$/i.test(code))
    .sort();
  for (const code of codes) {
    const content = responses[code]?.content;
    if (!content) continue;
    const type = pickMediaType(Object.keys(content), false);
    const schema = type ? content[type]?.schema : undefined;
    if (schema) return convert(schema, "output");
  }
  return undefined;
}
