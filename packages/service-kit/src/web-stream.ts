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
