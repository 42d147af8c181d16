import http2 from "node:http2";
import { HOP_BY_HOP_HEADERS, readAtMost } from "@agentplane/service-kit";
import { RELAY_FAILURE_HEADER } from "./protocol.ts";

/**
 * Answers declaring at most this many bytes are read whole and answered as one buffer (the
 * server writes head and body at once). So are answers of unknown length whose end arrives in
 * the same turn as their head (the relay sends a small answer as one flush); others (a watch, a
 * followed log, anything larger) stream from the bytes received so far.
 */
export const BUFFERED_BYTES = 64 * 1024;

/**
 * Headers of a relay's answer that never reach the caller. The relay and whatever answers behind
 * it (a Service through the API server's proxy) are the customer's, but the answer is served from
 * the platform's origin: nothing in it may act on that origin in a browser (set or clear its
 * cookies and storage, pin HSTS, name alternative services, grant CORS, widen a service worker's
 * scope, redirect by `refresh`, loosen the policy below) or speak for the platform (its own
 * `x-agentplane-` headers, but the relay's failure mark the hub consumes). See
 * docs/decisions/0027-cluster-proxy-answer-headers.md.
 */
const REFUSED_ANSWER_HEADERS = new Set([
  ...HOP_BY_HOP_HEADERS,
  "set-cookie",
  "set-cookie2",
  "clear-site-data",
  "strict-transport-security",
  "alt-svc",
  "service-worker-allowed",
  "refresh",
  "content-security-policy",
  "content-security-policy-report-only",
  "x-content-type-options",
]);

/**
 * Set on every answer: a page from the cluster renders, if at all, as a sandboxed document of an
 * opaque origin (no script, no access to the platform's cookies or storage), and is never sniffed
 * into something else than its declared type.
 */
const ANSWER_POLICY = { "content-security-policy": "sandbox", "x-content-type-options": "nosniff" } as const;

function refusedAnswerHeader(name: string): boolean {
  if (REFUSED_ANSWER_HEADERS.has(name) || name.startsWith("access-control-")) return true;
  return name.startsWith("x-agentplane-") && name !== RELAY_FAILURE_HEADER;
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
    if (key.startsWith(":") || value === undefined || refusedAnswerHeader(key)) continue;
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
