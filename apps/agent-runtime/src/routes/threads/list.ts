import { listThreadsRoute } from "@agentplane/contracts/runtime";
import { badRequest } from "@agentplane/problem-details";
import type { RuntimeDeps } from "../../deps.ts";
import { effectiveModels, loadAgent, modelDefaults } from "../../services/agent.ts";
import { decodeThreadCursor, listWebThreads, threadContextUsage, toThread } from "../../services/threads.ts";
import type { RuntimeApp } from "../types.ts";

export function registerListThreads(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(listThreadsRoute, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const after = cursor === undefined ? undefined : decodeThreadCursor(cursor);
    if (cursor !== undefined && !after) {
      throw badRequest("The cursor is not one this runtime handed out", [
        { pointer: "/query/cursor", message: "must be a nextCursor of a previous page" },
      ]);
    }
    const db = deps.database.db;
    const { rows, next } = await listWebThreads(db, { limit, ...(after ? { after } : {}) });
    const main = effectiveModels(await loadAgent(db), modelDefaults(deps.config)).main;
    const contexts = await threadContextUsage(
      db,
      rows.map((row) => row.id),
    );
    const items = rows.map((row) => {
      const context = contexts.get(row.id);
      return toThread(row, {
        contextTokens: context?.contextTokens ?? null,
        contextWindow: deps.catalog.windowOf(context?.modelId ?? main),
      });
    });
    return c.json({ items, ...(next ? { nextCursor: next } : {}) }, 200);
  });
}
