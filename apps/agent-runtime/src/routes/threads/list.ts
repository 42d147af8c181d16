import { listThreadsRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { effectiveModels, loadAgent, modelDefaults } from "../../services/agent.ts";
import { listWebThreads, threadContextUsage, toThread } from "../../services/threads.ts";
import type { RuntimeApp } from "../types.ts";

export function registerListThreads(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(listThreadsRoute, async (c) => {
    const db = deps.database.db;
    const rows = await listWebThreads(db);
    const main = effectiveModels(await loadAgent(db), modelDefaults(deps.config)).main;
    const contexts = await threadContextUsage(db);
    const items = rows.map((row) => {
      const context = contexts.get(row.id);
      return toThread(row, {
        contextTokens: context?.contextTokens ?? null,
        contextWindow: deps.catalog.windowOf(context?.modelId ?? main),
      });
    });
    return c.json({ items }, 200);
  });
}
