import type { DeliveryTarget, WebhookRunStatus } from "@agentplane/contracts/runtime";
import type Database from "better-sqlite3";
import type { Logger } from "pino";
import { newId, nowIso } from "../ids.ts";

export interface QueuedRun {
  seq: number;
  id: string;
  subscription: string;
  event: string;
  payload: string;
  prompt: string;
  deliver_to: DeliveryTarget;
  status: WebhookRunStatus;
  attempts: number;
}

export interface AcceptInput {
  subscription: string;
  event: string;
  payload: string;
  prompt: string;
  deliverTo: DeliveryTarget;
}

interface PendingAccept {
  input: AcceptInput;
  id: string;
  starter: boolean;
  resolve: (id: string) => void;
  reject: (err: unknown) => void;
}

export interface RunQueueDeps {
  sqlite: Database.Database;
  logger: Logger;
  /** Runs the agent and posts its result; a throw marks the run failed. */
  executeRun: (run: QueuedRun) => Promise<void>;
  /** Posts the brief failure notice of a failed run. */
  notifyFailure: (run: QueuedRun, error: string) => Promise<void>;
}

/** An interrupted run is tried once more after a restart; interrupted again, it fails with a notice. */
const MAX_ATTEMPTS = 2;

/**
 * Workers started per event-loop turn. Starting a run (its first rows, the model request) costs
 * about a millisecond; a burst of a hundred idle subscriptions started at once stalled the
 * receiver for >100 ms. Started a few at a time, the accepts in between keep being answered.
 */
const STARTS_PER_TURN = 4;
/**
 * Worker starts wait for a quiet receiver: a start is background work (the run itself takes
 * seconds), an accept is what a sender is waiting for. While accepts keep arriving, the queue
 * looks again every START_QUIET_MS; a turn with no new accept starts the next few workers. In a
 * CPU profile of the receiver benchmark, the worker starts (about 1 ms each) were a fifth of the
 * runtime's busy time during its accept rounds.
 */
const START_QUIET_MS = 2;
/** Under accepts that never pause, a committed run still starts within this delay. */
const MAX_START_DELAY_MS = 500;

function briefError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}

/**
 * The durable per-subscription queue of agent-mode webhook runs. A run is a row committed before
 * the 202; each subscription executes one run at a time in arrival order (seq), and different
 * subscriptions run concurrently. "Pending" counts accepted runs not yet started.
 */
export class WebhookRunQueue {
  readonly #deps: RunQueueDeps;
  readonly #pending = new Map<string, number>();
  readonly #active = new Map<string, Promise<void>>();
  #closed = false;
  readonly #insert: Database.Statement;
  readonly #next: Database.Statement<[string], QueuedRun>;
  readonly #markRunning: Database.Statement;
  readonly #finish: Database.Statement;
  readonly #insertBatch: (batch: PendingAccept[], createdAt: string) => void;
  readonly #startBatch: () => void;
  #batch: PendingAccept[] = [];
  /** Idle subscriptions whose next committed run starts at once (not counted as pending). */
  readonly #starting = new Set<string>();
  /** Subscriptions with committed runs waiting for their worker to start, in commit order. */
  readonly #toStart = new Set<string>();
  /** An accept arrived since the start loop last looked: the receiver is not quiet. */
  #acceptSeen = false;
  /** Since when the waiting starts made no progress (0: none waiting). */
  #startsWaitingSince = 0;
  #startScheduled = false;

  constructor(deps: RunQueueDeps) {
    this.#deps = deps;
    const { sqlite } = deps;
    this.#insert = sqlite.prepare(
      `insert into webhook_run (id, subscription, event, payload, prompt, deliver_to, status, attempts, created_at)
       values (?, ?, ?, ?, ?, ?, 'queued', 0, ?)`,
    );
    this.#next = sqlite.prepare(
      `select seq, id, subscription, event, payload, prompt, deliver_to, status, attempts from webhook_run
       where subscription = ? and status = 'queued' order by seq limit 1`,
    );
    this.#markRunning = sqlite.prepare(
      `update webhook_run set status = 'running', attempts = attempts + 1, started_at = ? where id = ?`,
    );
    // A finished run's payload (up to 1 MiB) is read by nothing: the record stays, its body does not.
    this.#finish = sqlite.prepare(
      `update webhook_run set status = ?, error = ?, finished_at = ?, payload = '' where id = ?`,
    );
    // The workers started in one turn mark their first runs `running` in one transaction.
    this.#startBatch = sqlite.transaction(() => {
      let started = 0;
      for (const subscription of this.#toStart) {
        if (started === STARTS_PER_TURN) break;
        this.#toStart.delete(subscription);
        this.#pump(subscription);
        started++;
      }
    });
    this.#insertBatch = sqlite.transaction((batch: PendingAccept[], createdAt: string) => {
      for (const { id, input } of batch) {
        this.#insert.run(id, input.subscription, input.event, input.payload, input.prompt, input.deliverTo, createdAt);
      }
    });
  }

  pendingCount(subscription: string): number {
    return this.#pending.get(subscription) ?? 0;
  }

  /**
   * Stores the run and starts the subscription's worker if idle; resolves with the run id once
   * the row is committed, or with null (at once) when the subscription already has `limit`
   * pending runs. Accepts arriving in the same event-loop turn are committed together in one
   * transaction (group commit): one WAL write for many 202s, none of them answered before it.
   */
  accept(input: AcceptInput, limit: number): Promise<string | null> {
    const sub = input.subscription;
    this.#acceptSeen = true;
    // The first run for an idle subscription starts as soon as it is committed: it is never pending.
    const starter = !this.#closed && !this.#active.has(sub) && !this.#starting.has(sub);
    if (starter) {
      this.#starting.add(sub);
    } else {
      const pending = this.pendingCount(sub);
      if (pending >= limit) return Promise.resolve(null);
      this.#pending.set(sub, pending + 1);
    }
    return new Promise((resolve, reject) => {
      this.#batch.push({ input, id: newId("run"), starter, resolve, reject });
      if (this.#batch.length === 1) setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    const batch = this.#batch;
    this.#batch = [];
    const createdAt = nowIso();
    try {
      this.#insertBatch(batch, createdAt);
    } catch (err) {
      for (const item of batch) {
        const sub = item.input.subscription;
        if (item.starter) this.#starting.delete(sub);
        else this.#pending.set(sub, Math.max(0, this.pendingCount(sub) - 1));
        item.reject(err);
      }
      return;
    }
    for (const item of batch) item.resolve(item.id);
    // Workers start on later turns, so the 202s of this batch are written before any turn begins.
    // Every subscription of the batch, not only idle ones: a worker that found its queue empty
    // while this batch was in flight has stopped, and nothing else would pick these runs up.
    for (const item of batch) this.#toStart.add(item.input.subscription);
    if (this.#startsWaitingSince === 0) this.#startsWaitingSince = performance.now();
    this.#scheduleStarts(START_QUIET_MS);
  }

  /** Starts the next few workers if no accept arrived since the last look (or the oldest waited too long). */
  #startSome(): void {
    this.#startScheduled = false;
    if (this.#closed) return;
    const quiet = !this.#acceptSeen;
    this.#acceptSeen = false;
    const overdue = performance.now() - this.#startsWaitingSince >= MAX_START_DELAY_MS;
    try {
      if (quiet || overdue) this.#startBatch();
    } finally {
      if (this.#toStart.size === 0) {
        this.#startsWaitingSince = 0;
      } else {
        if (quiet) this.#startsWaitingSince = performance.now();
        // Quiet: the next few on the next turn; an accept arriving meanwhile is seen first.
        this.#scheduleStarts(quiet ? 0 : START_QUIET_MS);
      }
    }
  }

  #scheduleStarts(delayMs: number): void {
    if (this.#startScheduled) return;
    this.#startScheduled = true;
    if (delayMs === 0) setImmediate(() => this.#startSome());
    else setTimeout(() => this.#startSome(), delayMs);
  }

  /**
   * After a restart: runs left `running` by a crash go back to the queue once (they keep their
   * place, seq order) or fail with a notice; then every subscription with queued runs starts.
   */
  async recover(): Promise<void> {
    const { sqlite, logger } = this.#deps;
    const interrupted = sqlite
      .prepare<[], QueuedRun>(
        `select seq, id, subscription, event, payload, prompt, deliver_to, status, attempts from webhook_run
         where status = 'running' order by seq`,
      )
      .all();
    const requeue = sqlite.prepare(`update webhook_run set status = 'queued', started_at = null where id = ?`);
    for (const run of interrupted) {
      if (run.attempts < MAX_ATTEMPTS) {
        requeue.run(run.id);
        logger.warn(
          { runId: run.id, subscription: run.subscription },
          "retrying a webhook run interrupted by a restart",
        );
      } else {
        const error = "interrupted by a restart twice";
        this.#finish.run("failed", error, nowIso(), run.id);
        await this.#notify(run, error);
      }
    }
    const counts = sqlite
      .prepare<[], { subscription: string; n: number }>(
        `select subscription, count(*) as n from webhook_run where status = 'queued' group by subscription`,
      )
      .all();
    for (const { subscription, n } of counts) this.#pending.set(subscription, n);
    for (const { subscription } of counts) this.#pump(subscription);
  }

  /** Stops starting runs and waits for the running ones (or until the timeout: they are retried at restart). */
  async close(timeoutMs = 5000): Promise<void> {
    this.#closed = true;
    const running = Promise.allSettled([...this.#active.values()]);
    await Promise.race([running, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
  }

  /** Resolves when no subscription has work left (tests and benchmarks). */
  async idle(): Promise<void> {
    for (;;) {
      if (this.#active.size > 0) await Promise.allSettled([...this.#active.values()]);
      else if (!this.#closed && (this.#batch.length > 0 || this.#toStart.size > 0))
        await new Promise((r) => setTimeout(r, START_QUIET_MS));
      else return;
    }
  }

  #pump(subscription: string): void {
    if (this.#closed || this.#active.has(subscription)) return;
    const first = this.#next.get(subscription);
    if (!first) return;
    const worker = this.#drain(subscription, first);
    this.#active.set(subscription, worker);
  }

  async #drain(subscription: string, first: QueuedRun): Promise<void> {
    let run: QueuedRun | undefined = first;
    let countedAsPending = !this.#starting.delete(subscription);
    while (run) {
      this.#markRunning.run(nowIso(), run.id);
      if (countedAsPending) this.#pending.set(subscription, Math.max(0, this.pendingCount(subscription) - 1));
      countedAsPending = true;
      try {
        await this.#deps.executeRun({ ...run, attempts: run.attempts + 1 });
        this.#finish.run("delivered", null, nowIso(), run.id);
      } catch (err) {
        if (this.#closed) {
          // Cut short by the shutdown (the model worker is stopped): the row stays `running`
          // and the run is retried after the restart, as after a crash.
          this.#deps.logger.warn({ runId: run.id, subscription }, "webhook run interrupted by the shutdown");
          break;
        }
        const error = briefError(err);
        this.#deps.logger.error({ runId: run.id, subscription, err }, "webhook run failed");
        this.#finish.run("failed", error, nowIso(), run.id);
        await this.#notify(run, error);
      }
      // No await between the lookup and the hand-over: accept() either sees this worker active
      // or finds the subscription idle and starts a new one, never neither.
      run = this.#closed ? undefined : this.#next.get(subscription);
    }
    this.#active.delete(subscription);
  }

  async #notify(run: QueuedRun, error: string): Promise<void> {
    try {
      await this.#deps.notifyFailure(run, error);
    } catch (err) {
      this.#deps.logger.error({ runId: run.id, err }, "could not post the failure notice of a webhook run");
    }
  }
}
