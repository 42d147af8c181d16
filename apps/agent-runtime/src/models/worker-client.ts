import { Worker } from "node:worker_threads";
import type { Message } from "@anthropic-ai/sdk/resources/messages";
import type { RuntimeConfig } from "../config.ts";
import { createModelClient, type ModelClient, type ModelClientOptions, type ModelRequest } from "./provider.ts";

export type ToWorker =
  | { type: "call"; id: number; request: ModelRequest; streamText: boolean }
  | { type: "abort"; id: number };

type FromWorker =
  | { type: "text"; id: number; delta: string }
  | { type: "done"; id: number; message: Message }
  | { type: "error"; id: number; name: string; message: string; status?: number };

interface Call {
  resolve: (message: Message) => void;
  reject: (err: Error) => void;
  onText: ((delta: string) => void) | undefined;
}

/** A model call that failed in the worker, carrying what the SDK error said. */
export class ModelCallError extends Error {
  readonly status: number | undefined;
  constructor(name: string, message: string, status: number | undefined) {
    super(message);
    this.name = name;
    this.status = status;
  }
}

/**
 * The runtime's model client: the provider's SDK client (createModelClient) running in a worker
 * thread. A profile of the webhook receiver under load showed each model request costing about
 * a millisecond of the main thread (connection setup, request building, stream decoding), which
 * delayed the accepts answered next to it. The worker starts on the first call, so a runtime that
 * never calls a model never starts one; if it dies, its calls fail and the next call starts a
 * new one.
 */
export class WorkerModelClient implements ModelClient {
  readonly provider: RuntimeConfig["provider"];
  readonly endpoint: string;
  readonly #config: RuntimeConfig;
  readonly #options: ModelClientOptions;
  readonly #calls = new Map<number, Call>();
  #worker: Worker | undefined;
  #nextId = 1;
  #closed = false;

  constructor(config: RuntimeConfig, options: ModelClientOptions = {}) {
    // Built here once for its endpoint and to fail at start, not on the first call, on options the
    // SDK would refuse; it loads no SDK until called, and it is never called.
    const local = createModelClient(config, options);
    this.provider = local.provider;
    this.endpoint = local.endpoint;
    this.#config = config;
    this.#options = options;
  }

  createMessage(
    request: ModelRequest,
    options: { onText?: (delta: string) => void; signal?: AbortSignal } = {},
  ): Promise<Message> {
    if (this.#closed) return Promise.reject(new Error("the model client is closed"));
    if (options.signal?.aborted) return Promise.reject(new Error("the model call was aborted"));
    const worker = this.#ensureWorker();
    const id = this.#nextId++;
    return new Promise<Message>((resolve, reject) => {
      this.#calls.set(id, { resolve, reject, onText: options.onText });
      options.signal?.addEventListener("abort", () => worker.postMessage({ type: "abort", id } satisfies ToWorker), {
        once: true,
      });
      worker.postMessage({ type: "call", id, request, streamText: Boolean(options.onText) } satisfies ToWorker);
    });
  }

  /** Stops the worker; calls still in flight fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker) await worker.terminate();
    this.#failAll(new Error("the model client is closed"));
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(new URL("./model-worker.ts", import.meta.url), {
      workerData: { config: this.#config, options: this.#options },
    });
    // Pending calls do not keep the process alive on their own: the HTTP server does.
    worker.unref();
    worker.on("message", (msg: FromWorker) => this.#onMessage(msg));
    worker.on("error", (err) => this.#failAll(err));
    worker.on("exit", () => {
      if (this.#worker === worker) this.#worker = undefined;
      this.#failAll(new Error("the model worker stopped"));
    });
    this.#worker = worker;
    return worker;
  }

  #onMessage(msg: FromWorker): void {
    const call = this.#calls.get(msg.id);
    if (!call) return;
    if (msg.type === "text") {
      call.onText?.(msg.delta);
      return;
    }
    this.#calls.delete(msg.id);
    if (msg.type === "done") call.resolve(msg.message);
    else call.reject(new ModelCallError(msg.name, msg.message, msg.status));
  }

  #failAll(err: Error): void {
    const calls = [...this.#calls.values()];
    this.#calls.clear();
    for (const call of calls) call.reject(err);
  }
}
