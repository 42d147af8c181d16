import type { OperationSpec, ParameterSpec } from "../src/operation-spec.ts";

// biome-ignore lint/suspicious/noExplicitAny: walking a generated JSON document
type Json = any;

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** Reduces the OpenAPI document to what callers need at run time without loading the document. */
export function buildOperationManifest(doc: Json): OperationSpec[] {
  const resolve = (schema: Json): Json => {
    let s = schema;
    while (s?.$ref) s = doc.components.schemas[String(s.$ref).split("/").pop() as string];
    return s ?? {};
  };
  const typeOf = (schema: Json): ParameterSpec["type"] => {
    const s = resolve(schema);
    const types = [s.type].flat().filter((t: unknown) => t && t !== "null");
    if (types.length === 1) return types[0];
    if (s.anyOf || s.oneOf) {
      const inner = (s.anyOf ?? s.oneOf).map((x: Json) => typeOf(x));
      if (inner.includes("array")) return "array";
      return inner.find((t: string) => t !== "object") ?? "object";
    }
    if (s.enum) return "string";
    return s.properties ? "object" : "string";
  };
  /** The string constants of a union whose type is not a string (`latest` in `integer | "latest"`). */
  const literalsOf = (schema: Json): { literals?: string[] } => {
    const s = resolve(schema);
    if (!(s.anyOf || s.oneOf) || typeOf(s) === "string") return {};
    const literals = (s.anyOf ?? s.oneOf)
      .map(resolve)
      .filter((x: Json) => x.type === "string" || typeof x.const === "string")
      .flatMap((x: Json) => (typeof x.const === "string" ? [x.const] : (x.enum ?? [])).map(String));
    return literals.length > 0 ? { literals } : {};
  };
  /** The type of an array's items, when it is not a string (`[50, 80]`: integer). */
  const itemsOf = (schema: Json): { items?: ParameterSpec["type"] } => {
    const s = resolve(schema);
    if (typeOf(s) !== "array") return {};
    const array =
      s.type === "array" ? s : (s.anyOf ?? s.oneOf ?? []).map(resolve).find((x: Json) => x.type === "array");
    const items = array?.items ? typeOf(array.items) : "string";
    return items === "string" ? {} : { items };
  };
  /** `string | string[]` (a command): a value that is not JSON is sent as the string it is. */
  const orStringOf = (schema: Json): { orString?: true } => {
    const s = resolve(schema);
    if (typeOf(s) !== "array" || !(s.anyOf || s.oneOf)) return {};
    const plain = (s.anyOf ?? s.oneOf)
      .map(resolve)
      .some((x: Json) => x.type === "string" && !x.enum && x.const === undefined);
    return plain ? { orString: true } : {};
  };
  const propertiesOf = (schema: Json): Record<string, Json> => {
    const s = resolve(schema);
    const props: Record<string, Json> = { ...(s.properties ?? {}) };
    for (const part of s.allOf ?? []) Object.assign(props, propertiesOf(part));
    return props;
  };
  const describe = (text: unknown) => (typeof text === "string" ? text.split("\n")[0]?.slice(0, 200) : undefined);

  const ops: OperationSpec[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params: Json[] = op.parameters ?? [];
      const query = params
        .filter((p) => p.in === "query")
        .map((p): ParameterSpec => {
          const schema = resolve(p.schema);
          return {
            name: p.name,
            required: Boolean(p.required),
            type: typeOf(p.schema),
            ...(schema.enum ? { enum: schema.enum.map(String) } : {}),
            ...literalsOf(p.schema),
            ...itemsOf(p.schema),
            ...orStringOf(p.schema),
            ...(describe(p.description) ? { description: describe(p.description) } : {}),
          };
        });
      const bodySchema = op.requestBody?.content?.["application/json"]?.schema;
      const bodyRequired = new Set<string>(resolve(bodySchema).required ?? []);
      const body = bodySchema
        ? {
            required: Boolean(op.requestBody.required),
            fields: Object.entries(propertiesOf(bodySchema)).map(
              ([name, prop]): ParameterSpec => ({
                name,
                required: bodyRequired.has(name),
                type: typeOf(prop),
                ...(resolve(prop).enum ? { enum: resolve(prop).enum.map(String) } : {}),
                ...literalsOf(prop),
                ...itemsOf(prop),
                ...orStringOf(prop),
                ...(describe(resolve(prop).description ?? prop.description)
                  ? { description: describe(resolve(prop).description ?? prop.description) }
                  : {}),
              }),
            ),
          }
        : null;
      const ok = Object.entries<Json>(op.responses ?? {}).find(([code]) => /^2/.test(code))?.[1];
      const answer = ok?.content?.["application/json"]?.schema;
      const answerProps = answer ? propertiesOf(answer) : {};
      const isList = Boolean(answerProps.items && typeOf(answerProps.items) === "array");
      const fields = Object.keys(isList ? propertiesOf(resolve(answerProps.items).items) : answerProps);
      ops.push({
        id: op.operationId,
        method: method.toUpperCase() as OperationSpec["method"],
        path,
        tag: op.tags?.[0] ?? "",
        summary: describe(op.summary) ?? "",
        pathParams: params.filter((p) => p.in === "path").map((p) => p.name),
        query,
        body,
        list: isList ? { paginated: Boolean(answerProps.nextCursor) } : null,
        fields,
        websocket: Boolean(op.responses?.["101"]),
        ...(Array.isArray(op.security) && op.security.length === 0 ? { public: true } : {}),
        passthrough: /\{path\}$/.test(path) || /\/aws$/.test(path),
      });
    }
  }
  return ops;
}
