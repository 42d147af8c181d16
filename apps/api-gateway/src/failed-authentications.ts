import { LRUCache } from "lru-cache";
import type { RateLimiter } from "./rate-limit.ts";

/**
 * Refused credentials, counted per address (the key `addressLimitKey` gives) against the same
 * budget per window as the requests of a caller without credentials. Every refused token costs a
 * lookup in tenancy and tells its sender one more token that is not valid; without a count, an
 * address could try tokens (a weak bootstrap token, say) as fast as it can send them. Once an
 * address has spent its budget, its requests with credentials are refused before any lookup until
 * the window ends.
 */
export class FailedAuthentications {
  /** Addresses over their budget, with the time their window ends (ms). */
  readonly #blocked = new LRUCache<string, number>({ max: 100_000 });
  readonly #limiter: RateLimiter;

  constructor(limiter: RateLimiter) {
    this.#limiter = limiter;
  }

  /** Seconds until this address may present credentials again; undefined when it may now. */
  blockedFor(addressKey: string): number | undefined {
    const until = this.#blocked.get(addressKey);
    if (until === undefined) return undefined;
    const left = until - Date.now();
    if (left <= 0) {
      this.#blocked.delete(addressKey);
      return undefined;
    }
    return Math.ceil(left / 1000);
  }

  /** Counts one refused credential of this address. */
  async record(addressKey: string): Promise<void> {
    const result = await this.#limiter.hit(`authfail:${addressKey}`);
    if (!result.allowed) this.#blocked.set(addressKey, Date.now() + result.resetSeconds * 1000);
  }
}
