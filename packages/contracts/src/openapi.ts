import { OpenAPIHono } from "@hono/zod-openapi";
import { PARAMETER_GLOSSARY, PROPERTY_GLOSSARY } from "./openapi-glossary.ts";
import { ALL_ROUTES } from "./routes.ts";

export const API_VERSION = "1.0.0";

/** The OpenAPI 3.1 description of the whole `/v1` API, built from the route contracts. */
export function buildOpenApiDocument(options: { serverUrl?: string; version?: string } = {}) {
  const app = new OpenAPIHono();
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An API token (`apl_…`), an OIDC JWT, a cluster JWT or a sandbox token",
  });
  for (const route of ALL_ROUTES) app.openAPIRegistry.registerPath(route);
  const doc = app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Agentplane API",
      version: options.version ?? API_VERSION,
      description:
        "The control-plane API of Agentplane. Errors are RFC 9457 problem details (`application/problem+json`).",
    },
    servers: options.serverUrl ? [{ url: options.serverUrl }] : [],
  });
  return describeFromGlossary(doc);
}

// biome-ignore lint/suspicious/noExplicitAny: walking a generated JSON document
type Json = any;

/** Fills descriptions a schema left out from the glossary (same name, same meaning everywhere). */
function describeFromGlossary(doc: Json): Json {
  const seen = new Set<Json>();
  const walk = (schema: Json) => {
    if (!schema || typeof schema !== "object" || seen.has(schema)) return;
    seen.add(schema);
    for (const [name, prop] of Object.entries<Json>(schema.properties ?? {})) {
      if (prop && typeof prop === "object" && !prop.description && !prop.$ref && PROPERTY_GLOSSARY[name]) {
        prop.description = PROPERTY_GLOSSARY[name];
      }
      walk(prop);
    }
    for (const key of ["items", "anyOf", "oneOf", "allOf", "additionalProperties"]) {
      const v = schema[key];
      if (Array.isArray(v)) v.forEach(walk);
      else walk(v);
    }
  };
  for (const schema of Object.values<Json>(doc.components?.schemas ?? {})) walk(schema);
  for (const item of Object.values<Json>(doc.paths ?? {})) {
    for (const op of Object.values<Json>(item)) {
      for (const param of op.parameters ?? []) {
        const known = PARAMETER_GLOSSARY[`${param.in}:${param.name}`];
        if (!param.description && known) param.description = param.schema?.description ?? known;
      }
      for (const media of Object.values<Json>(op.requestBody?.content ?? {})) walk(media.schema);
      for (const response of Object.values<Json>(op.responses ?? {})) {
        for (const media of Object.values<Json>(response.content ?? {})) walk(media.schema);
      }
    }
  }
  return doc;
}
