import { ProblemError } from "@agentplane/problem-details";

/** What a refused request is told to wait (the web UI and terminal UI retry or say so on their own). */
const RETRY_AFTER_SECONDS = 5;

/**
 * Requests of one kind in flight, counted per key (a thread) and in total. A slot is taken before
 * the work starts, so concurrent requests cannot pass the bound together, and given back when the
 * work ends; one past either bound is a 429 problem with Retry-After.
 */
export class InFlightBound {
  readonly #perKey = new Map<string, number>();
  readonly #maxPerKey: number;
  readonly #maxTotal: number;
  readonly #what: string;
  #total = 0;

  /** `what` names the requests in the refusal: "live streams", "turns". */
  constructor(maxPerKey: number, maxTotal: number, what: string) {
    this.#maxPerKey = maxPerKey;
    this.#maxTotal = maxTotal;
    this.#what = what;
  }

  /** Takes a slot for `key`, or throws a 429 problem; call the returned function when the work ends. */
  take(key: string): () => void {
    const held = this.#perKey.get(key) ?? 0;
    if (held >= this.#maxPerKey) {
      throw refused(`At most ${this.#maxPerKey} ${this.#what} of this thread may be open at once; wait for one to end`);
    }
    if (this.#total >= this.#maxTotal) {
      throw refused(`At most ${this.#maxTotal} ${this.#what} may be open at once; wait for one to end`);
    }
    this.#perKey.set(key, held + 1);
    this.#total += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#total -= 1;
      const left = (this.#perKey.get(key) ?? 1) - 1;
      if (left > 0) this.#perKey.set(key, left);
      else this.#perKey.delete(key);
    };
  }
}

function refused(detail: string): ProblemError {
  return new ProblemError("rate-limited", { detail, headers: { "retry-after": String(RETRY_AFTER_SECONDS) } });
}
