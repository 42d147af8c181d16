import { createOnError, ProblemError, problemJson, validationHook } from "@agentplane/problem-details";
import { exportHealth } from "@agentplane/telemetry";
import { OpenAPIHono } from "@hono/zod-openapi";
import type { RuntimeDeps } from "./deps.ts";
import type { HostPolicy } from "./http/allowed-hosts.ts";
import { guardCrossSite } from "./http/cross-site-guard.ts";
import { guardHosts, hostPolicyOf } from "./http/host-guard.ts";
import { limitApiBodies } from "./routes/body-limit.ts";
import { registerRoutes } from "./routes/index.ts";
import { serveWebUi } from "./web/serve.ts";

/** `off`, `connecting`, `connected`, or `disabled: <reason>` (e.g. `disabled: app id mismatch`). */
function teamChatHealth(deps: RuntimeDeps): string {
  const status = deps.teamChat?.status?.();
  if (!status) return deps.teamChat ? "connected" : "off";
  return status.state === "disabled" ? `disabled: ${status.detail ?? "unknown reason"}` : status.state;
}

/**
 * The API's answers are the person's own data (threads, notes, usage): kept by no cache (a shared
 * proxy's, the browser's disk) and never sniffed into another type. The web UI's files and event
 * streams name their own cache policy, which is kept.
 */
function keepAnswersOutOfCaches(app: OpenAPIHono): void {
  app.use("*", async (c, next) => {
    await next();
    try {
      const headers = c.res.headers;
      if (!headers.has("cache-control")) headers.set("cache-control", "no-store");
      if (!headers.has("x-content-type-options")) headers.set("x-content-type-options", "nosniff");
    } catch {
      // An answer passed on with immutable headers keeps them as they are.
    }
  });
}

/** The runtime's HTTP API. No I/O here: the database, model client and queue come in as deps. */
export function createRuntimeApp(
  deps: RuntimeDeps,
  hostPolicy: () => HostPolicy = () => hostPolicyOf(deps.config),
): OpenAPIHono {
  const app = new OpenAPIHono({ defaultHook: validationHook });
  app.onError(createOnError(deps.logger));
  // Around every answer, the guards' refusals included.
  keepAnswersOutOfCaches(app);
  // First of all: a request for a name this runtime does not answer to reaches no route.
  guardHosts(app, hostPolicy);
  guardCrossSite(app, hostPolicy);
  // Unknown paths (a trailing slash included) are problems too, like every other error.
  app.notFound((c) =>
    problemJson(c, new ProblemError("not-found", { detail: `No route for ${c.req.method} ${c.req.path}` })),
  );
  // Team chat is reported, never a reason to be unhealthy: web chat and webhooks serve without it.
  // Voice is reported the same way: `available` (with `voiceSandboxed`: whether the meeting browser
  // runs under Chromium's sandbox), or `off` with `voiceReason`.
  app.get("/health", (c) =>
    c.json({
      status: "ok",
      provider: deps.config.provider,
      teamChat: teamChatHealth(deps),
      voice: deps.voice.status,
      ...(deps.voice.status === "off" ? { voiceReason: deps.voice.reason } : { voiceSandboxed: deps.voice.sandboxed }),
      // With export on: what reached the OTLP collector and Langfuse, failed batches, drops.
      ...(exportHealth() ? { telemetry: exportHealth() } : {}),
    }),
  );

  limitApiBodies(app);
  registerRoutes(app, deps);
  serveWebUi(app);

  app.doc31("/openapi.json", { openapi: "3.1.0", info: { title: "Agentplane agent runtime", version: "1" } });
  return app;
}
