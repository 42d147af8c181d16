import { ProblemError } from "@agentplane/problem-details";
import { LRUCache } from "lru-cache";
import type { RateLimiter } from "./rate-limit.ts";

/**
 * Refused credentials, counted per address (the key `addressLimitKey` gives) against the same
 * budget per window as the requests of a caller without credentials. Every refused token costs a
 * lookup in tenancy and tells its sender one more token that is not valid; without a count, an
 * address could try tokens (a weak bootstrap token, say) as fast as it can send them. Once an
 * address has spent its budget, its requests with credentials are refused before any lookup until
 * the window ends. Every way in that takes credentials (routes, WebSocket upgrades, a sandbox's
 * ingress host, the agent runtime's front) counts and refuses through the one instance of its
 * limiter (`of`).
 */
export class FailedAuthentications {
  static readonly #byLimiter = new WeakMap<RateLimiter, FailedAuthentications>();

  /** The refusals counted with this limiter: one instance however many ways in ask for it. */
  static of(limiter: RateLimiter): FailedAuthentications {
    let found = FailedAuthentications.#byLimiter.get(limiter);
    if (!found) {
      found = new FailedAuthentications(limiter);
      FailedAuthentications.#byLimiter.set(limiter, found);
    }
    return found;
  }

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

  /** The 429 for an address over its budget (with `Retry-After`); undefined when it may go on. */
  refusal(addressKey: string): ProblemError | undefined {
    const seconds = this.blockedFor(addressKey);
    if (seconds === undefined) return undefined;
    return new ProblemError("rate-limited", {
      detail: `Too many refused credentials from this address; retry in ${seconds} s`,
      headers: { "retry-after": String(seconds) },
    });
  }

  /** Counts one refused credential of this address. */
  async record(addressKey: string): Promise<void> {
    const result = await this.#limiter.hit(`authfail:${addressKey}`);
    if (!result.allowed) this.#blocked.set(addressKey, Date.now() + result.resetSeconds * 1000);
  }

  /**
   * Looks credentials up (`lookup`) for an address that has not spent its budget (else rejects
   * with its 429), counting a refusal of them toward it.
   */
  guard<T>(addressKey: string, lookup: () => Promise<T>, onCountFailure?: (failure: unknown) => void): Promise<T> {
    const refused = this.refusal(addressKey);
    if (refused) return Promise.reject(refused);
    return lookup().catch((err: unknown) => {
      this.countIfRefused(addressKey, err, onCountFailure);
      throw err;
    });
  }

  /**
   * Counts `err` when it is the refusal of a credential (a 401), in the background: the answer
   * never waits for the count. Anything else (a 503 while tenancy is down) is not counted.
   */
  countIfRefused(addressKey: string, err: unknown, onFailure: (failure: unknown) => void = () => {}): void {
    if (!(err instanceof ProblemError) || err.status !== 401) return;
    this.record(addressKey).catch(onFailure);
  }
}
