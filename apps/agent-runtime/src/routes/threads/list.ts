import { listThreadsRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { effectiveModels, loadAgent, modelDefaults } from "../../services/agent.ts";
import { listWebThreads, toThread } from "../../services/threads.ts";
import type { RuntimeApp } from "../types.ts";

export function registerListThreads(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(listThreadsRoute, async (c) => {
    const db = deps.database.db;
    const rows = await listWebThreads(db);
    const main = effectiveModels(await loadAgent(db), modelDefaults(deps.config)).main;
    const contexts = new Map(
      (await db.selectFrom("thread_context").select(["thread_id", "context_tokens", "model_id"]).execute()).map((r) => [
        r.thread_id,
        r,
      ]),
    );
    const items = rows.map((row) => {
      const context = contexts.get(row.id);
      return toThread(row, {
        contextTokens: context?.context_tokens ?? null,
        contextWindow: deps.catalog.windowOf(context?.model_id ?? main),
      });
    });
    return c.json({ items }, 200);
  });
}
