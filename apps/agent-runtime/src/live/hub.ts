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

/** Events kept per thread for `Last-Event-ID` resume. */
const BUFFER = 2000;

/**
 * Fan-out of what happens in threads to their live followers (the SSE route). Each thread keeps
 * its last events in memory so a follower that reconnects with `Last-Event-ID` gets what it
 * missed; an id older than the buffer gets the whole buffer.
 */
export class LiveHub {
  readonly #listeners = new Map<string, Set<LiveListener>>();
  readonly #buffers = new Map<string, LiveEvent[]>();
  #next = Date.now() * 1000;

  publish(threadId: string, event: LiveEvent["event"], payload: unknown): LiveEvent {
    this.#next += 1;
    const item: LiveEvent = { id: String(this.#next), threadId, event, data: JSON.stringify(payload) };
    let buffer = this.#buffers.get(threadId);
    if (!buffer) {
      buffer = [];
      this.#buffers.set(threadId, buffer);
    }
    buffer.push(item);
    if (buffer.length > BUFFER) buffer.splice(0, buffer.length - BUFFER);
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

  /** Follows a thread; events after `lastEventId` still in the buffer are replayed first. Returns the unsubscribe. */
  follow(threadId: string, listener: LiveListener, lastEventId?: string): () => void {
    if (lastEventId !== undefined) {
      const after = Number(lastEventId);
      for (const item of this.#buffers.get(threadId) ?? []) if (!(Number(item.id) <= after)) listener(item);
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
