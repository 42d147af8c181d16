import { Worker } from "node:worker_threads";
import { ProblemError } from "@agentplane/problem-details";
import type { AnswerShape } from "../far-answer.ts";
import type { OperationFilter } from "./filter.ts";
import type { ParseAnswer, ParsedDescription, ParseJob } from "./parse-worker.ts";

/** The parses waiting for the thread past which a new one is refused (503). */
const MAX_WAITING = 32;
/**
 * A description within the bounds (size, `$ref` unfolding) parses in about a second; the parser's
 * own limit is 10 s for each of validation and dereferencing. Past this the thread is replaced.
 */
const PARSE_TIMEOUT_MS = 25_000;
/** The thread stops after this long without a parse and starts again at the next one. */
const IDLE_MS = 30_000;
/** How long a refused caller is told to wait. */
const RETRY_AFTER_SECONDS = 2;

/**
 * The worker next to this file: `parse-worker.ts` when the service runs from its TypeScript
 * sources (Node strips the types, as it does for this file), `parse-worker.js` from built output.
 */
const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "./parse-worker.ts" : "./parse-worker.js",
  import.meta.url,
);

interface Pending {
  resolve: (parsed: ParsedDescription) => void;
  reject: (err: unknown) => void;
}

export interface DescriptionParserOptions {
  maxWaiting?: number;
  timeoutMs?: number;
  idleMs?: number;
}

/** A description and what the tools are selected by (`ParseJob` without its id). */
export interface ParseRequest {
  input: string | Record<string, unknown>;
  pointer: string;
  fetched?: AnswerShape | undefined;
  documentUrl?: string | undefined;
  include?: OperationFilter | undefined;
  exclude?: OperationFilter | undefined;
}

/**
 * Parses OpenAPI descriptions into connector tools (validation, dereferencing, tool building:
 * `loadOpenApiDescription` and `buildToolsFromDocument`) on a thread of their own. One just within
 * the `$ref` bound takes about half a second to a second of a core; on the main thread that held
 * every request of the service (and, in the all-in-one process, of the platform) meanwhile, and any
 * project member who may create connectors could send one after another. Parses run one at a time,
 * in order; at most `maxWaiting` wait, and past that a parse is refused with a 503 and
 * `Retry-After`. The 400 problems of an invalid description reach the caller unchanged. The thread
 * starts on the first parse, stops when idle and is replaced when it fails or a parse overruns its
 * timeout (decision 0046, the shape of governance's `PolicyCompiler`).
 */
export class DescriptionParser {
  readonly #maxWaiting: number;
  readonly #timeoutMs: number;
  readonly #idleMs: number;
  readonly #pending = new Map<number, Pending>();
  #worker: Worker | undefined;
  #nextId = 1;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: DescriptionParserOptions = {}) {
    this.#maxWaiting = options.maxWaiting ?? MAX_WAITING;
    this.#timeoutMs = options.timeoutMs ?? PARSE_TIMEOUT_MS;
    this.#idleMs = options.idleMs ?? IDLE_MS;
  }

  /** Whether the thread is running (it runs only while there are parses). */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  parse(request: ParseRequest): Promise<ParsedDescription> {
    if (this.#closed) return Promise.reject(busy("Connections is shutting down"));
    if (this.#pending.size > this.#maxWaiting) {
      return Promise.reject(busy(`${this.#pending.size} descriptions are being parsed`));
    }
    const worker = this.#ensureWorker();
    const id = this.#nextId++;
    const job: ParseJob = {
      id,
      input: request.input,
      pointer: request.pointer,
      fetched: request.fetched,
      documentUrl: request.documentUrl,
      include: request.include,
      exclude: request.exclude,
    };
    return new Promise<ParsedDescription>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage(job);
      this.#arm();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#stop(busy("Connections is shutting down"));
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(WORKER_URL);
    // Waiting parses do not keep the process alive on their own: the HTTP server does.
    worker.unref();
    worker.on("message", (answer: ParseAnswer) => this.#answer(answer));
    worker.on("error", (err) => {
      if (this.#worker === worker) void this.#stop(failed(err.message));
    });
    worker.on("exit", () => {
      if (this.#worker === worker) void this.#stop(failed("the parsing thread stopped"));
    });
    this.#worker = worker;
    return worker;
  }

  #answer(answer: ParseAnswer): void {
    const pending = this.#pending.get(answer.id);
    if (!pending) return;
    this.#pending.delete(answer.id);
    if ("parsed" in answer) pending.resolve(answer.parsed);
    else if ("problem" in answer) {
      const { slug, status, title, detail, errors, headers, extensions } = answer.problem;
      pending.reject(
        new ProblemError(slug, {
          status,
          title,
          headers,
          extensions,
          ...(detail !== undefined ? { detail } : {}),
          ...(errors ? { errors } : {}),
        }),
      );
    } else {
      pending.reject(
        new ProblemError("internal-error", { detail: `The description's parser failed: ${answer.error}` }),
      );
    }
    this.#arm();
  }

  /**
   * While parses wait: the timeout of the one running (one answer per interval, or the thread is
   * replaced); with none: the idle stop.
   */
  #arm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    const waiting = this.#pending.size > 0;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        void this.#stop(waiting ? failed(`a parse took longer than ${this.#timeoutMs} ms`) : undefined);
      },
      waiting ? this.#timeoutMs : this.#idleMs,
    );
    this.#timer.unref();
  }

  async #stop(reason: Error | undefined): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const worker = this.#worker;
    this.#worker = undefined;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(reason ?? failed("the parsing thread stopped"));
    if (worker) await worker.terminate();
  }
}

function busy(detail: string): ProblemError {
  return new ProblemError("service-unavailable", {
    detail: `${detail}; retry in ${RETRY_AFTER_SECONDS} s`,
    headers: { "retry-after": String(RETRY_AFTER_SECONDS) },
  });
}

function failed(cause: string): ProblemError {
  return new ProblemError("service-unavailable", {
    detail: `The description could not be parsed (${cause}); retry in ${RETRY_AFTER_SECONDS} s`,
    headers: { "retry-after": String(RETRY_AFTER_SECONDS) },
  });
}
