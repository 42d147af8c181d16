import { listThreadMessagesRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { getWebThread, listRecentVisibleMessages, toChatMessage } from "../../services/threads.ts";
import type { RuntimeApp } from "../types.ts";

/** Text a listing answers at most: far more than a page shows, far less than a thread can hold. */
export const MAX_LISTED_TEXT = 8 * 1024 * 1024;

export function registerListThreadMessages(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(listThreadMessagesRoute, async (c) => {
    const { threadId } = c.req.valid("param");
    const thread = await getWebThread(deps.database.db, threadId);
    const rows = listRecentVisibleMessages(deps.database.sqlite, thread.id, MAX_LISTED_TEXT);
    return c.json({ items: rows.map(toChatMessage) }, 200);
  });
}
