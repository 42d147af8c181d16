import { followThreadRoute } from "@agentplane/contracts/runtime";
import { streamSSE } from "hono/streaming";
import type { RuntimeDeps } from "../../deps.ts";
import type { LiveEvent } from "../../live/hub.ts";
import { getWebThread } from "../../services/threads.ts";
import type { RuntimeApp } from "../types.ts";

const KEEPALIVE_MS = 15_000;

/** `GET /agents/threads/{id}/events`: the thread live, with `Last-Event-ID` resume. */
export function registerFollowThread(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(followThreadRoute, async (c) => {
    const { threadId } = c.req.valid("param");
    const lastEventId = c.req.valid("header")["last-event-id"];
    const thread = await getWebThread(deps.database.db, threadId);
    return streamSSE(c, async (sse) => {
      // Writes are chained so events leave in the order they happened.
      let chain = Promise.resolve();
      const send = (e: LiveEvent) => {
        chain = chain.then(() => sse.writeSSE({ id: e.id, event: e.event, data: e.data })).catch(() => undefined);
      };
      const unfollow = deps.live.follow(thread.id, send, lastEventId);
      const keepalive = setInterval(() => {
        chain = chain.then(async () => void (await sse.write(": keepalive\n\n"))).catch(() => undefined);
      }, KEEPALIVE_MS);
      await new Promise<void>((resolve) => {
        if (c.req.raw.signal.aborted) resolve();
        c.req.raw.signal.addEventListener("abort", () => resolve(), { once: true });
        sse.onAbort(() => resolve());
      });
      clearInterval(keepalive);
      unfollow();
    });
  });
}
