import { Worker } from "node:worker_threads";
import { ProblemError } from "@agentplane/problem-details";
import type { StoredRule } from "../db/schema.ts";
import type { CompileAnswer, CompileJob } from "./compile-worker.ts";

/** The compiles waiting for the thread past which a new one is refused (503). */
const MAX_WAITING = 32;
/** A compile takes well under a second within the body bounds (decision 0026); past this the thread is replaced. */
const COMPILE_TIMEOUT_MS = 10_000;
/** The thread stops after this long without a compile and starts again at the next one. */
const IDLE_MS = 30_000;
/** How long a refused caller is told to wait. */
const RETRY_AFTER_SECONDS = 2;

interface Pending {
  resolve: (rules: StoredRule[]) => void;
  reject: (err: unknown) => void;
}

export interface PolicyCompilerOptions {
  maxWaiting?: number;
  timeoutMs?: number;
  idleMs?: number;
}

/**
 * Compiles policy bodies (parse, schema validation, rule ids: `compilePolicyText`) on a thread of
 * their own. A full body takes up to about 0.6 s of a core; on the main thread that held every
 * decision of every organization (and, in the all-in-one process, every request) meanwhile.
 * Compiles run one at a time, in order; at most `maxWaiting` wait, and past that a write is
 * refused with a 503 and `Retry-After`. The thread starts on the first compile, stops when idle
 * (a Cedar module costs memory) and is replaced when it fails or a compile overruns its timeout.
 */
export class PolicyCompiler {
  readonly #maxWaiting: number;
  readonly #timeoutMs: number;
  readonly #idleMs: number;
  readonly #pending = new Map<number, Pending>();
  #worker: Worker | undefined;
  #nextId = 1;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: PolicyCompilerOptions = {}) {
    this.#maxWaiting = options.maxWaiting ?? MAX_WAITING;
    this.#timeoutMs = options.timeoutMs ?? COMPILE_TIMEOUT_MS;
    this.#idleMs = options.idleMs ?? IDLE_MS;
  }

  /** Whether the thread is running (it runs only while there are compiles). */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  compile(text: string, pointer = "/body/cedar"): Promise<StoredRule[]> {
    if (this.#closed) return Promise.reject(busy("Governance is shutting down"));
    if (this.#pending.size > this.#maxWaiting) {
      return Promise.reject(busy(`${this.#pending.size} policy bodies are being compiled`));
    }
    const worker = this.#ensureWorker();
    const id = this.#nextId++;
    return new Promise<StoredRule[]>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ id, text, pointer } satisfies CompileJob);
      this.#arm();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#stop(busy("Governance is shutting down"));
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(new URL("./compile-worker.ts", import.meta.url));
    // Waiting compiles do not keep the process alive on their own: the HTTP server does.
    worker.unref();
    worker.on("message", (answer: CompileAnswer) => this.#answer(answer));
    worker.on("error", (err) => {
      if (this.#worker === worker) void this.#stop(failed(err.message));
    });
    worker.on("exit", () => {
      if (this.#worker === worker) void this.#stop(failed("the compiling thread stopped"));
    });
    this.#worker = worker;
    return worker;
  }

  #answer(answer: CompileAnswer): void {
    const pending = this.#pending.get(answer.id);
    if (!pending) return;
    this.#pending.delete(answer.id);
    if ("rules" in answer) pending.resolve(answer.rules);
    else if ("problem" in answer) {
      const { slug, detail, errors } = answer.problem;
      pending.reject(new ProblemError(slug, { ...(detail ? { detail } : {}), ...(errors ? { errors } : {}) }));
    } else {
      pending.reject(
        new ProblemError("internal-error", { detail: `Cedar failed while compiling the policy: ${answer.error}` }),
      );
    }
    this.#arm();
  }

  /**
   * While compiles wait: the timeout of the one running (one answer per interval, or the thread
   * is replaced); with none: the idle stop.
   */
  #arm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    const waiting = this.#pending.size > 0;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        void this.#stop(waiting ? failed(`a compile took longer than ${this.#timeoutMs} ms`) : undefined);
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
    for (const p of pending) p.reject(reason ?? failed("the compiling thread stopped"));
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
    detail: `The policy could not be compiled (${cause}); retry in ${RETRY_AFTER_SECONDS} s`,
    headers: { "retry-after": String(RETRY_AFTER_SECONDS) },
  });
}
