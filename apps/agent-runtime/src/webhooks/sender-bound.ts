/**
 * How often a subscription whose senders are not verified (deliver-only, no verification) may be
 * posted to. Its posts go straight to the chat channels with no model call and no queue, and
 * anyone who knows its URL can send them: without a bound, one script fills every channel it
 * delivers to. Verified subscriptions are not bounded here; a run-mode one has its queue of
 * pending runs.
 */

/** Posts an unverified deliver-only subscription takes at once (a burst of alerts from one incident). */
export const UNVERIFIED_DELIVERY_BURST = 20;
/** Posts a minute it takes after a burst: one every 2 s. */
export const UNVERIFIED_DELIVERIES_PER_MINUTE = 30;
/** Buckets kept before the full ones (nothing posted for a while) are dropped. */
const MAX_BUCKETS = 1024;

/**
 * A token bucket per subscription: `burst` posts at once, refilled at `perMinute`. Two numbers per
 * subscription, refilled when asked, so a refused post costs no timer.
 */
export class SenderBound {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #perMs: number;
  readonly #burst: number;
  readonly #now: () => number;

  constructor(
    perMinute = UNVERIFIED_DELIVERIES_PER_MINUTE,
    burst = UNVERIFIED_DELIVERY_BURST,
    now: () => number = Date.now,
  ) {
    this.#perMs = perMinute / 60_000;
    this.#burst = burst;
    this.#now = now;
  }

  /** Takes one post for `key`: 0 when admitted, else the whole seconds until the next one would be. */
  take(key: string): number {
    const now = this.#now();
    const bucket = this.#buckets.get(key) ?? this.#open(key, now);
    bucket.tokens = Math.min(this.#burst, bucket.tokens + (now - bucket.at) * this.#perMs);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.#perMs / 1000));
  }

  #open(key: string, now: number): { tokens: number; at: number } {
    if (this.#buckets.size >= MAX_BUCKETS) {
      for (const [name, b] of this.#buckets) {
        if (b.tokens + (now - b.at) * this.#perMs >= this.#burst) this.#buckets.delete(name);
      }
    }
    const bucket = { tokens: this.#burst, at: now };
    this.#buckets.set(key, bucket);
    return bucket;
  }
}
