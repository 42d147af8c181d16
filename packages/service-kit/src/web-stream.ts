import type { Readable } from "node:stream";

/**
 * A Node readable (an undici answer body, an IncomingMessage) as a web stream read as its consumer
 * pulls, with backpressure; cancelling it (a client that went away) destroys the Node stream.
 * Node's own `Readable.toWeb` is not used for answers: when the client disconnects while data is
 * still arriving, its adapter enqueues into a stream it already closed and throws
 * "Controller is already closed" from a 'data' handler, an uncaught exception per disconnect.
 */
export function webStreamOf(readable: Readable): ReadableStream<Uint8Array> {
  const chunks = readable[Symbol.asyncIterator]() as AsyncIterator<Uint8Array | string>;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(typeof next.value === "string" ? Buffer.from(next.value) : next.value);
    },
    cancel() {
      readable.destroy();
    },
  });
}

/**
 * A web body read whole, counted as it streams: once it passes `limit` bytes the stream is
 * cancelled and `tooLarge()` is thrown, so a chunked body (no length to refuse up front) is never
 * read into memory past the limit. No body reads as no bytes. With `signal`, its abort cancels
 * the stream and rejects with the signal's reason.
 */
export async function readAtMost(
  body: ReadableStream<Uint8Array> | null | undefined,
  limit: number,
  tooLarge: () => Error,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  // Aborted (a deadline): the stream is cancelled and the signal's reason thrown.
  const abort = () => void reader.cancel().catch(() => {});
  signal?.addEventListener("abort", abort, { once: true });
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (signal?.aborted) throw signal.reason;
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
  } finally {
    signal?.removeEventListener("abort", abort);
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks, size);
}
