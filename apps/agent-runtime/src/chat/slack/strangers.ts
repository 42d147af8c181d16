/** How long a stranger who was told no is not told again. */
export const STRANGER_REFUSAL_WINDOW_MS = 3_600_000;
/** Strangers remembered; the one refused longest ago is forgotten past it. */
export const STRANGER_LIMIT = 10_000;

/**
 * Who was refused lately among the people who DM the bot without being its owner. A flood of DMs
 * from strangers would otherwise be a flood of refusals posted by the bot: each stranger is told
 * once per window, the rest of their messages are dropped. Bounded: past STRANGER_LIMIT people
 * the oldest refusal is forgotten (that person may be told once more).
 */
export class StrangerRefusals {
  readonly #windowMs: number;
  readonly #limit: number;
  readonly #now: () => number;
  /** Person -> when they were last refused, oldest first. */
  readonly #refusedAt = new Map<string, number>();

  constructor(options: { windowMs?: number; limit?: number; now?: () => number } = {}) {
    this.#windowMs = options.windowMs ?? STRANGER_REFUSAL_WINDOW_MS;
    this.#limit = options.limit ?? STRANGER_LIMIT;
    this.#now = options.now ?? Date.now;
  }

  /** True (and noted) when `person` was not refused within the window: tell them, once. */
  take(person: string): boolean {
    const now = this.#now();
    const last = this.#refusedAt.get(person);
    if (last !== undefined && now - last < this.#windowMs) return false;
    this.#refusedAt.delete(person);
    this.#refusedAt.set(person, now);
    if (this.#refusedAt.size > this.#limit) {
      const oldest = this.#refusedAt.keys().next().value;
      if (oldest !== undefined) this.#refusedAt.delete(oldest);
    }
    return true;
  }

  get size(): number {
    return this.#refusedAt.size;
  }
}
