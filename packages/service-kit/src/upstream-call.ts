import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { Dispatcher } from "undici";
import { servedResponse } from "./served-response.ts";

/** How the answer ended: read to its end, cut by the client, or broken by the upstream. */
export type CallOutcome = "complete" | "aborted" | "failed";

export interface UpstreamRequest {
  origin: string;
  /** Path and query, as sent. */
  path: string;
  method: Dispatcher.HttpMethod;
  headers: Record<string, string>;
  body?: Uint8Array | string | AsyncIterable<Uint8Array> | null | undefined;
  /** Default: the dispatcher's. */
  headersTimeout?: number;
  bodyTimeout?: number;
}

export interface UpstreamCallEvents {
  /** The status line and headers, before any chunk of the body. */
  onStart(status: number, headers: IncomingHttpHeaders): void;
  /** Every chunk of the answer as it arrives (before it is queued for the client). */
  onChunk(chunk: Uint8Array): void;
  /** Once, when the answer is over either way. */
  onEnd(outcome: CallOutcome): void;
}

/**
 * Bytes of the answer held for a client that is not reading (before its stream exists, or
 * while it is slow); past this the upstream socket is paused until the client reads again.
 */
const HIGH_WATER_MARK = 64 * 1024;

/**
 * The one undici dispatch handler of the platform (the gateway's HTTP dispatch through
 * `dispatchRequest` and the inference proxy's upstream calls both use it). One call on the
 * dispatcher's keep-alive pool, read straight from the HTTP
 * parser: no Node Readable, no abort signal, no async iterator per call. Chunks that arrive with
 * the headers are held; when the whole answer came with them (a small JSON answer) `complete`
 * gives it as one buffer, so the client gets status, headers and body in a single write.
 * Otherwise `stream` hands the chunks on as they arrive, pausing the upstream socket whenever
 * the client's side holds more than `HIGH_WATER_MARK`.
 */
export class UpstreamCall implements Dispatcher.DispatchHandler {
  status = 0;
  headers: IncomingHttpHeaders = {};
  /** Resolves on the upstream's status line and headers; rejects if none arrive. */
  readonly started: Promise<void>;
  private resolveStarted!: () => void;
  private rejectStarted!: (err: Error) => void;
  private controller: Dispatcher.DispatchController | null = null;
  private abortReason: Error | null = null;
  private held: Uint8Array[] = [];
  private heldBytes = 0;
  private ended = false;
  private error: Error | null = null;
  private sink: ReadableStreamDefaultController<Uint8Array> | null = null;
  /** The response the stream is served on (see served-response.ts), cut if the answer breaks. */
  private served: ServerResponse | undefined;
  private outcome: CallOutcome | null = null;
  private collector: { resolve: (body: Uint8Array) => void; reject: (err: Error) => void } | null = null;
  private readonly events: UpstreamCallEvents | undefined;

  constructor(dispatcher: Dispatcher, request: UpstreamRequest, events?: UpstreamCallEvents) {
    this.events = events;
    this.started = new Promise<void>((resolve, reject) => {
      this.resolveStarted = resolve;
      this.rejectStarted = reject;
    });
    dispatcher.dispatch(
      {
        origin: request.origin,
        path: request.path,
        method: request.method,
        headers: request.headers,
        body: (request.body ?? null) as Dispatcher.DispatchOptions["body"],
        ...(request.headersTimeout !== undefined ? { headersTimeout: request.headersTimeout } : {}),
        ...(request.bodyTimeout !== undefined ? { bodyTimeout: request.bodyTimeout } : {}),
      },
      this,
    );
  }

  /** Stops the call (client gone); the answer ends as `aborted`. */
  abort(reason: Error): void {
    if (this.outcome || this.abortReason) return;
    this.abortReason = reason;
    // Before the pool started the call, onRequestStart aborts it; before the headers, `started` rejects.
    this.controller?.abort(reason);
    if (this.status !== 0) this.end(this.ended && !this.error ? "complete" : "aborted");
  }

  /** The whole answer when it had already arrived (then the call is over), else undefined. */
  complete(): Uint8Array | undefined {
    if (!this.ended || this.error || this.sink) return undefined;
    const body = this.held.length === 1 ? (this.held[0] as Uint8Array) : Buffer.concat(this.held, this.heldBytes);
    this.held = [];
    this.end("complete");
    return body;
  }

  /**
   * The whole answer once it has arrived, for one whose declared length is known to be small: the
   * socket is not paused meanwhile (nobody reads before the end). Rejects if the answer breaks.
   */
  whole(): Promise<Uint8Array> {
    const body = this.complete();
    if (body) return Promise.resolve(body);
    if (this.error) return Promise.reject(this.error);
    const whole = new Promise<Uint8Array>((resolve, reject) => {
      this.collector = { resolve, reject };
    });
    this.controller?.resume();
    return whole;
  }

  /** The answer as a web stream, starting with what arrived so far. */
  stream(): ReadableStream<Uint8Array> {
    this.served = servedResponse();
    return new ReadableStream<Uint8Array>(
      {
        start: (sink) => {
          this.sink = sink;
          for (const chunk of this.held) sink.enqueue(chunk);
          this.held = [];
          if (this.error) this.fail(this.error);
          else if (this.ended) {
            sink.close();
            this.end("complete");
          }
        },
        // The client read: let the upstream socket flow again.
        pull: () => this.controller?.resume(),
        cancel: () => this.abort(new Error("client disconnected")),
      },
      { highWaterMark: HIGH_WATER_MARK, size: (chunk) => chunk.byteLength },
    );
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortReason) controller.abort(this.abortReason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // An interim answer (103 Early Hints): the final one follows.
    if (statusCode < 200) return;
    this.status = statusCode;
    this.headers = headers;
    this.events?.onStart(statusCode, headers);
    this.resolveStarted();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.events?.onChunk(chunk);
    const sink = this.sink;
    if (sink) {
      sink.enqueue(chunk);
      if ((sink.desiredSize ?? 0) <= 0) controller.pause();
      return;
    }
    this.held.push(chunk);
    this.heldBytes += chunk.byteLength;
    if (this.heldBytes >= HIGH_WATER_MARK && !this.collector) controller.pause();
  }

  onResponseEnd(): void {
    this.ended = true;
    if (this.collector) {
      const { resolve } = this.collector;
      this.collector = null;
      resolve(this.complete() as Uint8Array);
      return;
    }
    if (this.sink) {
      this.sink.close();
      this.end("complete");
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: Error): void {
    if (this.status === 0) {
      this.ended = true;
      this.rejectStarted(err);
      return;
    }
    this.error = err;
    if (this.collector) {
      const { reject } = this.collector;
      this.collector = null;
      reject(err);
      this.end(this.abortReason ? "aborted" : "failed");
      return;
    }
    if (this.sink) this.fail(err);
  }

  private fail(err: Error): void {
    try {
      // Cut because the client went away: nobody reads the rest, and it is no error to report.
      if (this.abortReason) this.sink?.close();
      // Served by serveFetch: the client's answer is cut where the upstream's broke (the stream
      // then ends as cancelled), and no error reaches the node server.
      else if (this.served && !this.served.destroyed) this.served.destroy();
      else this.sink?.error(err);
    } catch {
      // Already closed or cancelled by the client.
    }
    this.end(this.abortReason ? "aborted" : "failed");
  }

  private end(outcome: CallOutcome): void {
    if (this.outcome) return;
    this.outcome = outcome;
    this.events?.onEnd(outcome);
  }
}
