import http2 from "node:http2";
import { HOP_BY_HOP_HEADERS } from "@agentplane/service-kit";

/** The answer on an HTTP/2 stream as a Response: its status and headers (not hop-by-hop), the body streaming. */
export function responseOf(stream: http2.ClientHttp2Stream, head: http2.IncomingHttpHeaders, method: string): Response {
  const status = Number(head[":status"] ?? 502);
  const headers = new Headers();
  for (const [key, value] of Object.entries(head)) {
    if (key.startsWith(":") || value === undefined || HOP_BY_HOP_HEADERS.includes(key)) continue;
    for (const v of Array.isArray(value) ? value : [String(value)]) headers.append(key, v);
  }
  const empty = status === 204 || status === 304 || method === "HEAD";
  if (empty) stream.resume();
  return new Response(empty ? null : bodyOf(stream), { status, headers });
}

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
