import type { Dispatcher } from "undici";

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
 * One request through undici's dispatcher, with a handler of our own instead of `undici.request`:
 * a small answer (declared length at most `bufferUpTo`) is collected as it arrives and resolved in
 * the same turn it completes (no Node stream, no consumer built per answer); a larger one, or one
 * of unknown length, streams as a web stream whose backpressure pauses the connection. Cancelling
 * the stream, or the signal, aborts the request; nothing is enqueued after the reader went away.
 */
export function dispatchRequest(dispatcher: Dispatcher, options: DispatchOptions): Promise<DispatchedResponse> {
  return new Promise<DispatchedResponse>((resolve, reject) => {
    let control: Dispatcher.DispatchController | undefined;
    let settled = false;
    let chunks: Buffer[] | undefined;
    let size = 0;
    let answer: Omit<DispatchedResponse, "bytes" | "stream"> | undefined;
    let stream: ReadableStreamDefaultController<Uint8Array> | undefined;
    let streamDone = false;
    let discard = false;

    const { signal } = options;
    const onAbort = () => control?.abort(signal?.reason ?? new DOMException("aborted", "AbortError"));
    const release = () => signal?.removeEventListener("abort", onAbort);
    const fail = (err: Error) => {
      release();
      if (!settled) {
        settled = true;
        reject(err);
        return;
      }
      if (stream && !streamDone) {
        streamDone = true;
        try {
          stream.error(err);
        } catch {
          // the reader cancelled in between
        }
      }
    };

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(controller) {
        control = controller;
        if (signal?.aborted) onAbort();
      },
      onResponseStart(controller, statusCode, headers) {
        // An interim answer (103 Early Hints): the final one follows.
        if (statusCode < 200) return;
        answer = { status: statusCode, headers: headers as RawResponseHeaders };
        if (options.bodyless(statusCode)) {
          discard = true;
          settled = true;
          resolve({ ...answer, bytes: null, stream: null });
          return;
        }
        const declared = headers["content-length"];
        if (typeof declared === "string" && Number(declared) <= options.bufferUpTo) {
          chunks = [];
          return;
        }
        settled = true;
        resolve({
          ...answer,
          bytes: null,
          stream: new ReadableStream<Uint8Array>(
            {
              start(c) {
                stream = c;
              },
              pull() {
                if (controller.paused) controller.resume();
              },
              cancel(reason) {
                streamDone = true;
                release();
                controller.abort(reason instanceof Error ? reason : new DOMException("cancelled", "AbortError"));
              },
            },
            { highWaterMark: 1 },
          ),
        });
      },
      onResponseData(controller, chunk) {
        // The parser resumed after a pause can report an empty piece: nothing to hand on.
        if (discard || chunk.byteLength === 0) return;
        if (chunks) {
          chunks.push(chunk);
          size += chunk.length;
          return;
        }
        if (!stream || streamDone) return;
        try {
          stream.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        } catch {
          return;
        }
        if ((stream.desiredSize ?? 0) <= 0) controller.pause();
      },
      onResponseEnd() {
        release();
        if (chunks && answer) {
          settled = true;
          resolve({
            ...answer,
            bytes: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size),
            stream: null,
          });
          return;
        }
        if (stream && !streamDone) {
          streamDone = true;
          try {
            stream.close();
          } catch {
            // the reader cancelled in between
          }
        }
      },
      onResponseError(_controller, err) {
        fail(err);
      },
    };

    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      dispatcher.dispatch(
        {
          origin: options.origin,
          path: options.path,
          method: options.method as Dispatcher.HttpMethod,
          headers: options.headers,
          ...(options.body !== undefined && options.body !== null ? { body: options.body as never } : {}),
        },
        handler,
      );
    } catch (err) {
      fail(err as Error);
    }
  });
}
