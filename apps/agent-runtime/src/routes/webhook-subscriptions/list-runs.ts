import { listWebhookRunsRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { listWebhookRuns } from "../../webhooks/run-history.ts";
import type { RuntimeApp } from "../types.ts";

export function registerListWebhookRuns(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(listWebhookRunsRoute, async (c) => {
    const { name } = c.req.valid("param");
    const { limit } = c.req.valid("query");
    deps.registry.require(name);
    return c.json({ items: await listWebhookRuns(deps.database.db, name, limit) }, 200);
  });
}
