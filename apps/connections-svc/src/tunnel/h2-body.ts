import http2 from "node:http2";
import { readAtMost } from "@agentplane/service-kit";
import { ANSWER_POLICY, refusedAnswerHeader } from "../answer-headers.ts";
import { RELAY_FAILURE_HEADER } from "./protocol.ts";

/**
 * Answers declaring at most this many bytes are read whole and answered as one buffer (the
 * server writes head and body at once). So are answers of unknown length whose end arrives in
 * the same turn as their head (the relay sends a small answer as one flush); others (a watch, a
 * followed log, anything larger) stream from the bytes received so far.
 */
export const BUFFERED_BYTES = 64 * 1024;

/** As any upstream's (answer-headers.ts), but the relay's failure mark, which the tunnel hub consumes. */
function refusedRelayHeader(name: string): boolean {
  return name !== RELAY_FAILURE_HEADER && refusedAnswerHeader(name);
}

/**
 * The answer on an HTTP/2 stream as a Response: its status and headers (less those refused
 * above, with the policy above), the body whole when it is small and complete, else streaming.
 */
export function responseOf(
  stream: http2.ClientHttp2Stream,
  head: http2.IncomingHttpHeaders,
  method: string,
  /** The error of a stream reset before its body was whole. */
  resetError: () => Error = () => new Error("the tunnel stream was reset"),
): Response | Promise<Response> {
  const status = Number(head[":status"] ?? 502);
  const headers = new Headers(ANSWER_POLICY);
  for (const [key, value] of Object.entries(head)) {
    if (key.startsWith(":") || value === undefined || refusedRelayHeader(key)) continue;
    for (const v of Array.isArray(value) ? value : [String(value)]) headers.append(key, v);
  }
  const empty = status === 204 || status === 304 || method === "HEAD";
  if (empty) stream.resume();
  if (empty) return new Response(null, { status, headers });
  const declared = Number(head["content-length"] ?? Number.NaN);
  // The Response is made as the body is settled, so a streaming one listens from that moment on.
  return firstBytes(stream, declared <= BUFFERED_BYTES, resetError, (chunks, ended) =>
    ended
      ? new Response(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), { status, headers })
      : new Response(bodyOf(stream, chunks), { status, headers }),
  );
}

/**
 * The body's bytes until its end (`untilEnd`, a small declared length) or until the end of this
 * turn of the event loop, whichever comes first, handed to `settle` with `ended` when they are
 * the whole body. Rejects when the stream closes before that.
 */
function firstBytes<T>(
  stream: http2.ClientHttp2Stream,
  untilEnd: boolean,
  resetError: () => Error,
  settle: (chunks: Buffer[], ended: boolean) => T,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (ended: boolean) => {
      if (done) return;
      done = true;
      stream.off("data", onData).off("end", onEnd).off("close", onClose);
      if (!ended) stream.pause();
      try {
        resolve(settle(chunks, ended));
      } catch (err) {
        reject(err);
      }
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      // Whatever was declared, more than this streams.
      if (size > BUFFERED_BYTES) finish(false);
    };
    const onEnd = () => finish(true);
    // Every stream closes; only one closed before its end is an error (made only then).
    const onClose = () => {
      if (done) return;
      done = true;
      stream.off("data", onData).off("end", onEnd);
      reject(resetError());
    };
    if (stream.readableEnded) return finish(true);
    if (stream.destroyed) return onClose();
    stream.on("data", onData).once("end", onEnd).once("close", onClose);
    if (!untilEnd) setImmediate(() => finish(false));
  });
}

/**
 * The response body of an HTTP/2 stream as a web stream, with backpressure (the stream pauses
 * while the reader is behind) and cancellation (a cancelled reader resets the HTTP/2 stream, which
 * the relay turns into an aborted upstream request: how a client abort ends a watch).
 */
export function bodyOf(stream: http2.ClientHttp2Stream, first: Buffer[] = []): ReadableStream<Uint8Array> {
  let settled = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        for (const chunk of first) controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
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

/**
 * An answer the platform reads itself (the relay's status, its failure problem) as JSON, reading
 * no more than `limit` bytes of it for no longer than `timeoutMs`: a longer or slower one is
 * cancelled (its stream reset) and refused.
 */
export async function smallJson(res: Response, options: { limit?: number; timeoutMs: number }): Promise<unknown> {
  if (!res.body) return undefined;
  const limit = options.limit ?? 64 * 1024;
  const bytes = await readAtMost(
    res.body,
    limit,
    () => new Error(`an answer of more than ${limit} bytes`),
    AbortSignal.timeout(options.timeoutMs),
  );
  return JSON.parse(Buffer.from(bytes).toString("utf8"));
}
