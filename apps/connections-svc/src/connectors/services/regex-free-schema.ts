import { SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_VALUES } from "../openapi/schema.ts";

/**
 * A tool's input schema without the keywords that run a regular expression (`pattern`,
 * `patternProperties`), for the platform's own check of a call's arguments.
 *
 * Both the schema and the arguments are a tenant's (an OpenAPI description, or what a remote MCP
 * server lists), and JavaScript's backtracking engine takes time exponential in the input for some
 * patterns (`^(a+)+$` holds the event loop for minutes on forty characters): one call would stop the
 * service for every tenant. So the platform never runs them; the far side, which the schema describes,
 * checks them as it always must (decision 0044). What is dropped only widens what passes here:
 * with `patternProperties` go `additionalProperties` and `unevaluatedProperties` of the same schema,
 * which would otherwise count the properties those patterns admit as extra.
 */

export function withoutRegexKeywords(schema: unknown): unknown {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return schema;
  const source = schema as Record<string, unknown>;
  const patterned = "patternProperties" in source;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === "pattern" || key === "patternProperties") continue;
    if (patterned && (key === "additionalProperties" || key === "unevaluatedProperties")) continue;
    let kept: unknown = value;
    if (SCHEMA_MAPS.has(key) && value && typeof value === "object" && !Array.isArray(value)) {
      kept = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, withoutRegexKeywords(sub)]));
    } else if ((SCHEMA_LISTS.has(key) || key === "items") && Array.isArray(value)) {
      // `items` as a list: the tuple form of older drafts.
      kept = value.map(withoutRegexKeywords);
    } else if (SCHEMA_VALUES.has(key)) {
      kept = withoutRegexKeywords(value);
    }
    // Defined, not assigned: a `__proto__` key stays a key and never becomes the copy's prototype.
    Object.defineProperty(out, key, { value: kept, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
