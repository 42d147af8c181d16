import { listThreadsRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { listWebThreads, toThread } from "../../services/threads.ts";
import type { RuntimeApp } from "../types.ts";

export function registerListThreads(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(listThreadsRoute, async (c) => {
    const rows = await listWebThreads(deps.database.db);
    return c.json({ items: rows.map(toThread) }, 200);
  });
}
