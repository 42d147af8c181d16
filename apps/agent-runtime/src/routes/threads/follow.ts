import { followThreadRoute } from "@agentplane/contracts/runtime";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import type { RuntimeDeps } from "../../deps.ts";
import { FollowerSlots } from "../../live/follower-slots.ts";
import { LIVE_BUFFER_LIMITS, type LiveEvent } from "../../live/hub.ts";
import { getWebThread } from "../../services/threads.ts";
import type { RuntimeApp } from "../types.ts";

const KEEPALIVE_MS = 15_000;
/**
 * How far a follower may fall behind (events published, not yet taken by its connection) before
 * its stream is closed: room for a whole replay of the thread's buffer and as much again. A client
 * that stops reading would otherwise hold every later event of the thread in memory; dropped, it
 * reconnects with `Last-Event-ID` and gets what the buffer still holds.
 */
const MAX_LAG_BYTES = 2 * LIVE_BUFFER_LIMITS.bytesPerThread;

/**
 * `GET /agents/threads/{id}/events`: the thread live, with `Last-Event-ID` resume. Open streams
 * are bounded per thread and in total (FollowerSlots): one more is answered 429.
 */
export function registerFollowThread(app: RuntimeApp, deps: RuntimeDeps): void {
  const slots = new FollowerSlots();
  app.openapi(followThreadRoute, async (c) => {
    const { threadId } = c.req.valid("param");
    const lastEventId = c.req.valid("header")["last-event-id"];
    const thread = await getWebThread(deps.database.db, threadId);
    // HEAD (answered by this GET route) gets the headers and ends: a stream nobody can read
    // would keep its follower until the connection closes.
    if (c.req.method === "HEAD") {
      return c.body(null, 200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    }
    const release = slots.take(thread.id);
    return streamSSE(c, async (sse) => {
      try {
        await followLive(sse);
      } finally {
        release();
      }
    });

    async function followLive(sse: SSEStreamingApi): Promise<void> {
      // Writes are chained so events leave in the order they happened.
      let chain = Promise.resolve();
      let lagBytes = 0;
      let lagging = false;
      let stop = () => {};
      const stopped = new Promise<void>((resolve) => {
        stop = resolve;
      });
      const send = (e: LiveEvent) => {
        if (lagging) return;
        lagBytes += e.data.length;
        if (lagBytes > MAX_LAG_BYTES) {
          lagging = true;
          stop();
          return;
        }
        chain = chain
          .then(() => sse.writeSSE({ id: e.id, event: e.event, data: e.data }))
          .then(() => {
            lagBytes -= e.data.length;
          })
          .catch(() => undefined);
      };
      const unfollow = deps.live.follow(thread.id, send, lastEventId);
      const keepalive = setInterval(() => {
        chain = chain.then(async () => void (await sse.write(": keepalive\n\n"))).catch(() => undefined);
      }, KEEPALIVE_MS);
      if (c.req.raw.signal.aborted) stop();
      c.req.raw.signal.addEventListener("abort", stop, { once: true });
      sse.onAbort(stop);
      await stopped;
      clearInterval(keepalive);
      unfollow();
      if (lagging) {
        deps.logger.info({ threadId: thread.id }, "live follower fell behind; its stream was closed");
        // Drops the writes still queued for it; it reconnects with Last-Event-ID.
        sse.abort();
      }
    }
  });
}
