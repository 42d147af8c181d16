import type { IncomingMessage } from "node:http";

/** The largest webhook body the receiver reads. */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/**
 * Bytes of webhook bodies the receiver holds at once. Each post is bounded, their number is not:
 * a few hundred senders each sending 1 MiB and holding back its last byte held as many MiB in
 * buffers. Bytes are counted as they arrive (not from Content-Length), so a post that declares a
 * large body and sends nothing holds nothing: a few idle connections cannot shut the receiver.
 */
export const MAX_BODY_BYTES_IN_FLIGHT = 32 * MAX_WEBHOOK_BODY_BYTES;

/** A counter of the body bytes held by the posts being received. */
export class BodyBudget {
  readonly #max: number;
  #held = 0;

  constructor(max = MAX_BODY_BYTES_IN_FLIGHT) {
    this.#max = max;
  }

  /** Whether every byte is taken: a new post is refused before it is read. */
  get full(): boolean {
    return this.#held >= this.#max;
  }

  /** A tab for one post: `take` adds bytes (false once they do not fit), `close` gives them all back. */
  open(): BodyTab {
    let held = 0;
    return {
      take: (bytes) => {
        if (this.#held + bytes > this.#max) return false;
        this.#held += bytes;
        held += bytes;
        return true;
      },
      close: () => {
        this.#held -= held;
        held = 0;
      },
    };
  }
}

export interface BodyTab {
  take(bytes: number): boolean;
  close(): void;
}

/** Why a body read stopped early: past the size limit, or past what the budget has left. */
export class BodyRefused extends Error {
  readonly reason: "too-large" | "budget";

  constructor(reason: "too-large" | "budget") {
    super(reason);
    this.reason = reason;
  }
}

/**
 * The body of a request as it arrives on the socket, each chunk taken from `tab` first. Past
 * `limit` or the budget, reading stops at once (the rest is discarded by the server, never
 * buffered) and BodyRefused is thrown. A connection closed before the body's end rejects.
 */
export function readIncoming(incoming: IncomingMessage, limit: number, tab: BodyTab): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (finish: () => void) => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("close", onClose);
      finish();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      const refused = size > limit ? "too-large" : tab.take(chunk.length) ? undefined : "budget";
      if (refused) {
        // Flowing with no listener: the rest is read and dropped, and the answer can still be sent.
        done(() => reject(new BodyRefused(refused)));
        incoming.resume();
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => done(() => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
    const onError = (err: Error) => done(() => reject(err));
    const onClose = () => {
      if (!incoming.readableEnded) done(() => reject(new Error("aborted")));
    };
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onError);
    incoming.on("close", onClose);
  });
}
