import { type MessageRow, toChatMessage } from "../services/threads.ts";
import type { TurnEvent } from "../turns/run-turn.ts";

export interface LiveEvent {
  /** Increasing across the process and across restarts (it starts at the boot time in microseconds). */
  id: string;
  threadId: string;
  /** `message` (a delivered message: a turn step, a webhook, heartbeat or scheduled delivery), `delta`, `step`, `tool_call`, `tool_result`. */
  event: "message" | TurnEvent["type"];
  data: string;
}

export type LiveListener = (event: LiveEvent) => void;

/** How much is kept for `Last-Event-ID` resume: per thread, and across all threads. */
export interface LiveBufferLimits {
  eventsPerThread: number;
  bytesPerThread: number;
  totalBytes: number;
}

export const LIVE_BUFFER_LIMITS: LiveBufferLimits = {
  eventsPerThread: 2000,
  bytesPerThread: 2 * 1024 * 1024,
  totalBytes: 32 * 1024 * 1024,
};

/** What one kept event is counted as: its text plus a rough allowance for the object around it. */
const sizeOf = (item: LiveEvent) => item.data.length + item.id.length + item.threadId.length + 64;

interface ThreadBuffer {
  events: LiveEvent[];
  bytes: number;
}

/**
 * Fan-out of what happens in threads to their live followers (the SSE route). Each thread keeps
 * its last events in memory so a follower that reconnects with `Last-Event-ID` gets what it
 * missed; an id older than the buffer gets the whole buffer. What is kept is bounded by count and
 * size per thread, and in total: past the total, the threads least recently active lose theirs
 * first (the messages stay in the database; only the replay of live events is gone).
 */
export class LiveHub {
  readonly #listeners = new Map<string, Set<LiveListener>>();
  /** In order of last activity, the least recent first. */
  readonly #buffers = new Map<string, ThreadBuffer>();
  readonly #limits: LiveBufferLimits;
  #bytes = 0;
  #next = Date.now() * 1000;

  constructor(limits: LiveBufferLimits = LIVE_BUFFER_LIMITS) {
    this.#limits = limits;
  }

  /** What the buffers hold now, in counted bytes. */
  get bufferedBytes(): number {
    return this.#bytes;
  }

  publish(threadId: string, event: LiveEvent["event"], payload: unknown): LiveEvent {
    this.#next += 1;
    const item: LiveEvent = { id: String(this.#next), threadId, event, data: JSON.stringify(payload) };
    this.#keep(item);
    for (const listener of this.#listeners.get(threadId) ?? []) {
      try {
        listener(item);
      } catch {
        // A broken follower must not stop the others (its stream is closed by the route).
      }
    }
    return item;
  }

  publishMessage(row: MessageRow): void {
    if (row.internal) return;
    this.publish(row.thread_id, "message", toChatMessage(row));
  }

  publishTurnEvent(threadId: string, event: TurnEvent): void {
    const { type, ...rest } = event;
    this.publish(threadId, type, rest);
  }

  #keep(item: LiveEvent): void {
    const { eventsPerThread, bytesPerThread, totalBytes } = this.#limits;
    const buffer = this.#buffers.get(item.threadId) ?? { events: [], bytes: 0 };
    // Re-inserted so the map stays in order of last activity.
    this.#buffers.delete(item.threadId);
    this.#buffers.set(item.threadId, buffer);
    const size = sizeOf(item);
    buffer.events.push(item);
    buffer.bytes += size;
    this.#bytes += size;
    // The newest event always stays, however large: a follower gets at least the last thing.
    while (buffer.events.length > 1 && (buffer.events.length > eventsPerThread || buffer.bytes > bytesPerThread)) {
      const dropped = buffer.events.shift() as LiveEvent;
      buffer.bytes -= sizeOf(dropped);
      this.#bytes -= sizeOf(dropped);
    }
    for (const [threadId, oldest] of this.#buffers) {
      if (this.#bytes <= totalBytes || oldest === buffer) break;
      this.#buffers.delete(threadId);
      this.#bytes -= oldest.bytes;
    }
  }

  /** Follows a thread; events after `lastEventId` still in the buffer are replayed first. Returns the unsubscribe. */
  follow(threadId: string, listener: LiveListener, lastEventId?: string): () => void {
    if (lastEventId !== undefined) {
      const after = Number(lastEventId);
      for (const item of this.#buffers.get(threadId)?.events ?? []) if (!(Number(item.id) <= after)) listener(item);
    }
    let set = this.#listeners.get(threadId);
    if (!set) {
      set = new Set();
      this.#listeners.set(threadId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(threadId);
    };
  }

  followers(threadId: string): number {
    return this.#listeners.get(threadId)?.size ?? 0;
  }
}
