import { ProblemError } from "@agentplane/problem-details";

/** Live streams one thread may have open at once: a person's tabs, the terminal UI, with room to spare. */
export const MAX_LIVE_FOLLOWERS_PER_THREAD = 16;
/** Live streams the runtime holds open at once, across all threads. */
export const MAX_LIVE_FOLLOWERS = 128;
/** What a refused follower is told to wait (the web UI and terminal UI retry on their own). */
const RETRY_AFTER_SECONDS = 5;

/**
 * The open live streams, counted per thread and in total. Each one holds a connection, a timer and
 * a listener every event of its thread is written to: without a bound, a client that opens
 * streams in a loop holds the runtime's memory and sockets, and every event is written once per
 * stream. A slot is taken before the stream starts, so concurrent requests cannot pass the bound
 * together, and given back when it ends.
 */
export class FollowerSlots {
  readonly #perThread = new Map<string, number>();
  #total = 0;

  /** Takes a slot for a stream of `threadId`, or throws a 429 problem; call the returned function when the stream ends. */
  take(threadId: string): () => void {
    const held = this.#perThread.get(threadId) ?? 0;
    if (held >= MAX_LIVE_FOLLOWERS_PER_THREAD) {
      throw refused(
        `At most ${MAX_LIVE_FOLLOWERS_PER_THREAD} live streams of this thread may be open at once; close one first`,
      );
    }
    if (this.#total >= MAX_LIVE_FOLLOWERS) {
      throw refused(`At most ${MAX_LIVE_FOLLOWERS} live streams may be open at once; close one first`);
    }
    this.#perThread.set(threadId, held + 1);
    this.#total += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#total -= 1;
      const left = (this.#perThread.get(threadId) ?? 1) - 1;
      if (left > 0) this.#perThread.set(threadId, left);
      else this.#perThread.delete(threadId);
    };
  }
}

function refused(detail: string): ProblemError {
  return new ProblemError("rate-limited", { detail, headers: { "retry-after": String(RETRY_AFTER_SECONDS) } });
}
