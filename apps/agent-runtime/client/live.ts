import { ApiError, type RuntimeClient } from "./api.ts";
import { readSseFrames } from "./sse.ts";

export type LiveStatus = "connecting" | "live" | "reconnecting";

export interface LiveEventFrame {
  id: string | undefined;
  event: string;
  data: unknown;
}

export interface LiveFollow {
  close(): void;
  /** The id of the last event received: what a new follower resumes from. */
  readonly lastEventId: string | undefined;
}

const MIN_RETRY_MS = 500;
const MAX_RETRY_MS = 5000;

/**
 * Follows a thread's live stream (`GET /agents/threads/{id}/events`) and keeps following: when
 * the connection drops (the runtime restarts, a proxy closes it) it reconnects with
 * `Last-Event-ID`, so the events missed in between are replayed and none is shown twice.
 */
export function followThread(
  client: RuntimeClient,
  threadId: string,
  onEvent: (event: LiveEventFrame) => void,
  onStatus: (status: LiveStatus, detail?: string) => void = () => {},
  lastEventId?: string,
): LiveFollow {
  let last = lastEventId;
  let closed = false;
  let controller = new AbortController();
  let wake: (() => void) | undefined;

  const loop = async () => {
    let retry = MIN_RETRY_MS;
    onStatus("connecting");
    while (!closed) {
      try {
        const res = await client.raw(
          "GET",
          `agents/threads/${encodeURIComponent(threadId)}/events`,
          undefined,
          last ? { "last-event-id": last } : {},
          controller.signal,
        );
        onStatus("live");
        retry = MIN_RETRY_MS;
        if (res.body) {
          for await (const frame of readSseFrames(res.body)) {
            if (frame.id) last = frame.id;
            let data: unknown = frame.data;
            try {
              data = JSON.parse(frame.data);
            } catch {
              // Not every event needs to be JSON; keep the text.
            }
            onEvent({ id: frame.id, event: frame.event, data });
          }
        }
        if (!closed) onStatus("reconnecting", "The live stream ended");
      } catch (err) {
        if (closed) return;
        // A thread that no longer exists will not come back: stop instead of retrying forever.
        if (err instanceof ApiError && err.status === 404) {
          onStatus("reconnecting", err.message);
          return;
        }
        onStatus("reconnecting", (err as Error).message);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, retry);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      retry = Math.min(retry * 2, MAX_RETRY_MS);
      controller = new AbortController();
    }
  };
  void loop();
  return {
    close() {
      closed = true;
      controller.abort();
      wake?.();
    },
    get lastEventId() {
      return last;
    },
  };
}
