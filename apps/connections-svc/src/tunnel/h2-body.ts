import http2 from "node:http2";
import { HOP_BY_HOP_HEADERS } from "@agentplane/service-kit";

/**
 * Answers declaring at most this many bytes are read whole and answered as one buffer (the
 * server writes head and body at once); longer ones, and those of unknown length (a watch),
 * stream.
 */
export const BUFFERED_BYTES = 64 * 1024;

/**
 * The answer on an HTTP/2 stream as a Response: its status and headers (not hop-by-hop), the body
 * whole when it declares a small length, else streaming.
 */
export function responseOf(
  stream: http2.ClientHttp2Stream,
  head: http2.IncomingHttpHeaders,
  method: string,
  /** The error of a stream reset before its small body was whole. */
  resetError: () => Error = () => new Error("the tunnel stream was reset"),
): Response | Promise<Response> {
  const status = Number(head[":status"] ?? 502);
  const headers = new Headers();
  for (const [key, value] of Object.entries(head)) {
    if (key.startsWith(":") || value === undefined || HOP_BY_HOP_HEADERS.includes(key)) continue;
    for (const v of Array.isArray(value) ? value : [String(value)]) headers.append(key, v);
  }
  const empty = status === 204 || status === 304 || method === "HEAD";
  if (empty) stream.resume();
  if (empty) return new Response(null, { status, headers });
  const declared = Number(head["content-length"] ?? Number.NaN);
  if (declared <= BUFFERED_BYTES) {
    return wholeBody(stream, resetError).then((body) => new Response(body, { status, headers }));
  }
  return new Response(bodyOf(stream), { status, headers });
}

/** The whole body of a stream; rejects when the stream ends otherwise (reset, closed). */
function wholeBody(stream: http2.ClientHttp2Stream, resetError: () => Error): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let ended = false;
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.once("end", () => {
      ended = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    // Every stream closes; only one closed before its end is an error (made only then).
    stream.once("close", () => {
      if (!ended) reject(resetError());
    });
  });
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
