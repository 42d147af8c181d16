import type { Dispatcher } from "undici";
import { UpstreamCall } from "./upstream-call.ts";

/** The answer's headers as undici parsed them: lower-case names, a repeated header as an array. */
export type RawResponseHeaders = Record<string, string | string[]>;

/** What `dispatchRequest` resolves with once the answer's headers are in. */
export interface DispatchedResponse {
  status: number;
  headers: RawResponseHeaders;
  /** The whole body when it was read before resolving (see `bufferUpTo`), else null. */
  bytes: Uint8Array | null;
  /** The body as it streams, when it was not read whole; null for a body-less answer. */
  stream: ReadableStream<Uint8Array> | null;
}

export interface DispatchOptions {
  origin: string;
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array | string | AsyncIterable<Uint8Array> | null;
  signal?: AbortSignal | undefined;
  /** Answers declaring a Content-Length up to this many bytes are read whole before resolving. */
  bufferUpTo: number;
  /** Whether the answer to this request has no body whatever it declares (HEAD, 204, 304...). */
  bodyless: (status: number) => boolean;
}

/**
 * One request through undici's dispatcher with the platform's dispatch handler (`UpstreamCall`)
 * instead of `undici.request`: a small answer (declared length at most `bufferUpTo`) is collected
 * as it arrives and resolved in the same turn it completes (no Node stream, no consumer built per
 * answer); a larger one, or one of unknown length, streams as a web stream whose backpressure
 * pauses the connection. Cancelling the stream, or the signal, aborts the request.
 */
export async function dispatchRequest(dispatcher: Dispatcher, options: DispatchOptions): Promise<DispatchedResponse> {
  const { signal } = options;
  const call = new UpstreamCall(dispatcher, {
    origin: options.origin,
    path: options.path,
    method: options.method as Dispatcher.HttpMethod,
    headers: options.headers,
    body: options.body ?? null,
  });
  const onAbort = () => call.abort(signal?.reason ?? new DOMException("aborted", "AbortError"));
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  const release = () => signal?.removeEventListener("abort", onAbort);
  try {
    await call.started;
  } catch (err) {
    release();
    throw err;
  }
  const answer = { status: call.status, headers: call.headers as RawResponseHeaders };
  if (options.bodyless(answer.status)) {
    release();
    return { ...answer, bytes: null, stream: null };
  }
  const declared = answer.headers["content-length"];
  if (typeof declared === "string" && Number(declared) <= options.bufferUpTo) {
    try {
      return { ...answer, bytes: await call.whole(), stream: null };
    } finally {
      release();
    }
  }
  // The signal stays armed while the answer streams; the call ends either way.
  return { ...answer, bytes: null, stream: call.stream() };
}
