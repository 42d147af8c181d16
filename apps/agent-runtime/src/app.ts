import { createOnError, ProblemError, problemJson, validationHook } from "@agentplane/problem-details";
import { OpenAPIHono } from "@hono/zod-openapi";
import type { RuntimeDeps } from "./deps.ts";
import { registerRoutes } from "./routes/index.ts";

/** The runtime's HTTP API. No I/O here: the database, model client and queue come in as deps. */
export function createRuntimeApp(deps: RuntimeDeps): OpenAPIHono {
  const app = new OpenAPIHono({ defaultHook: validationHook });
  app.onError(createOnError(deps.logger));
  // Unknown paths (a trailing slash included) are problems too, like every other error.
  app.notFound((c) =>
    problemJson(c, new ProblemError("not-found", { detail: `No route for ${c.req.method} ${c.req.path}` })),
  );
  app.get("/health", (c) => c.json({ status: "ok", provider: deps.config.provider }));

  registerRoutes(app, deps);

  app.doc31("/openapi.json", { openapi: "3.1.0", info: { title: "Agentplane agent runtime", version: "1" } });
  return app;
}
