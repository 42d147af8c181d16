import http2 from "node:http2";

/**
 * The response body of an HTTP/2 stream as a web stream, with backpressure (the stream pauses
 * while the reader is behind) and cancellation (a cancelled reader resets the HTTP/2 stream, which
 * the relay turns into an aborted upstream request: how a client abort ends a watch).
 */
export function bodyOf(stream: http2.ClientHttp2Stream): ReadableStream<Uint8Array> {
  let settled = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        stream.on("data", (chunk: Buffer) => {
          if (settled) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 1) <= 0) stream.pause();
        });
        stream.once("end", () => {
          if (settled) return;
          settled = true;
          controller.close();
        });
        stream.once("close", () => {
          if (settled) return;
          settled = true;
          controller.error(new Error("the tunnel stream was reset"));
        });
      },
      pull() {
        stream.resume();
      },
      cancel() {
        settled = true;
        stream.close(http2.constants.NGHTTP2_CANCEL);
      },
    },
    { highWaterMark: 16 },
  );
}
