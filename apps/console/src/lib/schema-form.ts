/**
 * A form generated from a tool's input schema (JSON Schema, the subset tools use): one field per
 * top-level property, typed inputs for scalars and enums, a JSON box for objects and arrays. The
 * typed values become the call's `arguments`; what cannot be read is an error next to its field.
 */
export type FieldKind = "string" | "number" | "integer" | "boolean" | "enum" | "json";

export interface SchemaField {
  name: string;
  kind: FieldKind;
  required: boolean;
  description?: string;
  options?: string[];
}

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  description?: string;
};

function kindOf(schema: Schema): FieldKind {
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === "string")) return "enum";
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (type === "string" || type === "number" || type === "integer" || type === "boolean") return type;
  return "json";
}

export function schemaFields(inputSchema: Record<string, unknown> | undefined): SchemaField[] {
  const schema = (inputSchema ?? {}) as Schema;
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, prop]) => ({
    name,
    kind: kindOf(prop),
    required: required.has(name),
    ...(prop.description ? { description: prop.description } : {}),
    ...(kindOf(prop) === "enum" ? { options: prop.enum as string[] } : {}),
  }));
}

export interface ArgumentsResult {
  arguments: Record<string, unknown>;
  /** Field name → what is wrong with it. */
  errors: Record<string, string>;
}

/** The form's raw values (strings, or booleans for checkboxes) as the tool's arguments. */
export function toArguments(fields: SchemaField[], values: Record<string, string | boolean>): ArgumentsResult {
  const args: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const field of fields) {
    const raw = values[field.name];
    if (field.kind === "boolean") {
      if (raw !== undefined) args[field.name] = raw === true || raw === "true";
      else if (field.required) args[field.name] = false;
      continue;
    }
    const text = typeof raw === "string" ? raw.trim() : "";
    if (text === "") {
      if (field.required) errors[field.name] = "Required";
      continue;
    }
    if (field.kind === "number" || field.kind === "integer") {
      const n = Number(text);
      if (!Number.isFinite(n)) errors[field.name] = "A number";
      else if (field.kind === "integer" && !Number.isInteger(n)) errors[field.name] = "A whole number";
      else args[field.name] = n;
    } else if (field.kind === "json") {
      try {
        args[field.name] = JSON.parse(text);
      } catch {
        errors[field.name] = "Not valid JSON";
      }
    } else if (field.kind === "enum" && field.options && !field.options.includes(text)) {
      errors[field.name] = `One of ${field.options.join(", ")}`;
    } else {
      args[field.name] = typeof raw === "string" ? raw : text;
    }
  }
  return { arguments: args, errors };
}

/**
 * The field an API error pointer names under a prefix (`/body/arguments/a`, `/arguments/a` →
 * `a` for the prefix `arguments`), undefined when it names something else.
 */
export function fieldOfPointer(pointer: string, prefix: string): string | undefined {
  const parts = pointer.split("/").slice(1);
  if (parts[0] === "body") parts.shift();
  if (parts[0] !== prefix || parts.length < 2) return undefined;
  return parts[1]!.replace(/~1/g, "/").replace(/~0/g, "~");
}
