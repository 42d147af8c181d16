import { Worker } from "node:worker_threads";
import { ProblemError } from "@agentplane/problem-details";

/** How long a refused caller is told to wait. */
const RETRY_AFTER_SECONDS = 2;

export interface WorkerLaneOptions {
  /** The jobs waiting for the thread past which a new one is refused (503); default 32. */
  maxWaiting?: number;
  /** How long the thread may take to answer the job it runs before it is replaced (default 10 s). */
  timeoutMs?: number;
  /** The thread stops after this long without a job and starts again at the next one (default 30 s). */
  idleMs?: number;
}

/** What a lane's thread is and how its work and failures are named to callers. */
export interface WorkerLaneSpec<R, A extends { id: number }> {
  /** The worker's module. */
  url: URL;
  /** The work in one phrase, for its problems: "a compile", "a parse". */
  job: string;
  /** The thread in one phrase: "the compiling thread". */
  thread: string;
  /** The problem's detail when the work failed for a reason of the thread's: "The policy could not be compiled". */
  failure: string;
  /** Why nothing is taken any more once the lane is closed: "Governance is shutting down". */
  closing: string;
  /** Why a job is refused while `waiting` are queued: "32 policy bodies are being compiled". */
  queued(waiting: number): string;
  /** The worker's answer to a job, as its result or the error it is rejected with. */
  settle(answer: A): { result: R } | { error: Error };
}

interface Pending<R> {
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

/**
 * CPU-heavy work of a service (a policy compile, an OpenAPI description's parse) on a thread of
 * its own, so that one caller's large input does not hold every other request of the process
 * meanwhile. Jobs run one at a time, in order; at most `maxWaiting` wait, and past that a job is
 * refused with a 503 and `Retry-After`. The thread starts on the first job, stops when idle and
 * is replaced when it fails or a job overruns its timeout; the jobs it held are then refused the
 * same way.
 */
export class WorkerLane<J extends object, R, A extends { id: number }> {
  readonly #spec: WorkerLaneSpec<R, A>;
  readonly #maxWaiting: number;
  readonly #timeoutMs: number;
  readonly #idleMs: number;
  readonly #pending = new Map<number, Pending<R>>();
  #worker: Worker | undefined;
  #nextId = 1;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(spec: WorkerLaneSpec<R, A>, options: WorkerLaneOptions = {}) {
    this.#spec = spec;
    this.#maxWaiting = options.maxWaiting ?? 32;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#idleMs = options.idleMs ?? 30_000;
  }

  /** Whether the thread is running (it runs only while there are jobs). */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  /** Runs the job on the thread (posted with an `id` of the lane's). */
  run(job: J): Promise<R> {
    if (this.#closed) return Promise.reject(busy(this.#spec.closing));
    if (this.#pending.size > this.#maxWaiting) return Promise.reject(busy(this.#spec.queued(this.#pending.size)));
    const worker = this.#ensureWorker();
    const id = this.#nextId++;
    return new Promise<R>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ ...job, id });
      this.#arm();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#stop(busy(this.#spec.closing));
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(this.#spec.url);
    // Waiting jobs do not keep the process alive on their own: the HTTP server does.
    worker.unref();
    worker.on("message", (answer: A) => this.#answer(answer));
    worker.on("error", (err) => {
      if (this.#worker === worker) void this.#stop(this.#failed(err.message));
    });
    worker.on("exit", () => {
      if (this.#worker === worker) void this.#stop(this.#failed(`${this.#spec.thread} stopped`));
    });
    this.#worker = worker;
    return worker;
  }

  #answer(answer: A): void {
    const pending = this.#pending.get(answer.id);
    if (!pending) return;
    this.#pending.delete(answer.id);
    const settled = this.#spec.settle(answer);
    if ("result" in settled) pending.resolve(settled.result);
    else pending.reject(settled.error);
    this.#arm();
  }

  /**
   * While jobs wait: the timeout of the one running (one answer per interval, or the thread is
   * replaced); with none: the idle stop.
   */
  #arm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    const waiting = this.#pending.size > 0;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        void this.#stop(waiting ? this.#failed(`${this.#spec.job} took longer than ${this.#timeoutMs} ms`) : undefined);
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
    for (const p of pending) p.reject(reason ?? this.#failed(`${this.#spec.thread} stopped`));
    if (worker) await worker.terminate();
  }

  #failed(cause: string): ProblemError {
    return busy(`${this.#spec.failure} (${cause})`);
  }
}

function busy(detail: string): ProblemError {
  return new ProblemError("service-unavailable", {
    detail: `${detail}; retry in ${RETRY_AFTER_SECONDS} s`,
    headers: { "retry-after": String(RETRY_AFTER_SECONDS) },
  });
}
