import { OpenAPIHono } from "@hono/zod-openapi";
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
  return app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Agentplane API",
      version: options.version ?? API_VERSION,
      description:
        "The control-plane API of Agentplane. Errors are RFC 9457 problem details (`application/problem+json`).",
    },
    servers: options.serverUrl ? [{ url: options.serverUrl }] : [],
  });
}
