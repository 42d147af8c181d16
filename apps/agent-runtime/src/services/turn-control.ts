/**
 * The turns running in each thread, so a person can stop them (`POST /agents/threads/{id}/stop`).
 * A thread can hold more than one at a time (a chat turn and a webhook run in the main thread).
 */
export class TurnControl {
  readonly #running = new Map<string, Set<AbortController>>();

  /** Registers a turn; call the returned function when it ends. */
  begin(threadId: string): { signal: AbortSignal; end: () => void } {
    const controller = new AbortController();
    let set = this.#running.get(threadId);
    if (!set) {
      set = new Set();
      this.#running.set(threadId, set);
    }
    set.add(controller);
    return {
      signal: controller.signal,
      end: () => {
        set.delete(controller);
        if (set.size === 0 && this.#running.get(threadId) === set) this.#running.delete(threadId);
      },
    };
  }

  /** Aborts every turn running in the thread; false when none was. */
  stop(threadId: string): boolean {
    const set = this.#running.get(threadId);
    if (!set || set.size === 0) return false;
    for (const controller of set) controller.abort();
    return true;
  }

  running(threadId: string): boolean {
    return (this.#running.get(threadId)?.size ?? 0) > 0;
  }
}
