import { listThreadMessagesRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { getWebThread, listVisibleMessages, toChatMessage } from "../../services/threads.ts";
import type { RuntimeApp } from "../types.ts";

export function registerListThreadMessages(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(listThreadMessagesRoute, async (c) => {
    const { threadId } = c.req.valid("param");
    const thread = await getWebThread(deps.database.db, threadId);
    const rows = await listVisibleMessages(deps.database.db, thread.id);
    return c.json({ items: rows.map(toChatMessage) }, 200);
  });
}
