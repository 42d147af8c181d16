/** The largest webhook body the receiver reads. */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/**
 * Bytes of webhook bodies the receiver holds at once, counted from what each post may grow to
 * (its Content-Length, or the largest body when it streams in chunks). Each post is bounded, their
 * number is not: a few hundred senders declaring 1 MiB each and sending it slowly held as many
 * MiB in buffers. 32 of the largest bodies fit, many thousands of real ones (a few KB each).
 */
export const MAX_BODY_BYTES_IN_FLIGHT = 32 * MAX_WEBHOOK_BODY_BYTES;

/** A counter of reserved bytes: a post reserves its room before a byte of its body is read. */
export class BodyBudget {
  readonly #max: number;
  #held = 0;

  constructor(max = MAX_BODY_BYTES_IN_FLIGHT) {
    this.#max = max;
  }

  /** Reserves `bytes`; the returned function gives them back (once). Undefined when they do not fit. */
  take(bytes: number): (() => void) | undefined {
    if (this.#held + bytes > this.#max) return undefined;
    this.#held += bytes;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#held -= bytes;
    };
  }

  get held(): number {
    return this.#held;
  }
}
