import { createThreadRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { effectiveModels, loadAgent, modelDefaults } from "../../services/agent.ts";
import { createThread, toThread } from "../../services/threads.ts";
import type { RuntimeApp } from "../types.ts";

export function registerCreateThread(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(createThreadRoute, async (c) => {
    const body = c.req.valid("json") ?? {};
    const row = await createThread(deps.database.db, { kind: "web", title: body.title?.trim() || "New chat" });
    const main = effectiveModels(await loadAgent(deps.database.db), modelDefaults(deps.config)).main;
    return c.json(toThread(row, { contextTokens: null, contextWindow: deps.catalog.windowOf(main) }), 201);
  });
}
