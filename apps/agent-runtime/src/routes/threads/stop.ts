import { stopThreadTurnRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { getWebThread } from "../../services/threads.ts";
import type { RuntimeApp } from "../types.ts";

export function registerStopThreadTurn(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(stopThreadTurnRoute, async (c) => {
    const thread = await getWebThread(deps.database.db, c.req.valid("param").threadId);
    return c.json({ stopped: deps.turns.stop(thread.id) }, 200);
  });
}
