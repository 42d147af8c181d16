import type { Bus } from "./bus.ts";
import type { OutboxStatements } from "./outbox-sql.ts";

/** The part of a logger the relay uses (pino's Logger fits). */
export interface OutboxLogger {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** An event as the outbox table holds it. */
export interface OutboxRow {
  id: string;
  topic: string;
  data: unknown;
  time: string;
}

/** Runs one of the relay's fixed statements with its parameters. */
export type RunStatement = <R>(text: string, parameters: unknown[]) => Promise<{ rows: R[] }>;

export interface RelaySettings {
  bus: Bus;
  statements: OutboxStatements;
  run: RunStatement;
  logger?: OutboxLogger | undefined;
  pollMs: number;
  /** The longest poll interval a relay that keeps finding nothing grows to (never below `pollMs`). */
  maxIdlePollMs: number;
  batchSize: number;
  maxBackoffMs: number;
  leaseMs: number;
}

/** Batches published from memory at once; past this, new events wait for the relay. */
const MAX_DIRECT_BATCHES = 8;

/**
 * The outbox's relay: moves written rows to the bus. Its stages, each a method below:
 *
 * 1. **claim** (`claimBatch`): lease a batch of available rows, oldest event first, deleting the
 *    rows published since the last round in the same statement;
 * 2. **publish** (`publishClaimed`): publish them in order; from the first the bus refuses, the
 *    rest wait for the backoff (`retryLater`);
 * 3. **drain** (`flush`): repeat while full batches come back and the bus accepts them;
 * 4. **schedule** (`schedule`): the next round after the poll interval, or after the backoff
 *    while the bus is down. While rounds find nothing the interval doubles, up to
 *    `maxIdlePollMs`; a round that finds rows, or `relaySoon`, brings it back to `pollMs`.
 *
 * Beside the rounds, rows written outside a transaction are delivered straight from memory
 * (`deliver`) while the bus is healthy, and their ids join the published ledger like a round's.
 */
export class OutboxRelay {
  readonly #s: RelaySettings;
  /** The lease of a claimed or directly delivered row, as an interval parameter. */
  readonly lease: string;
  #failures = 0;
  #timer: NodeJS.Timeout | undefined;
  /** When the scheduled round is due (`performance.now()` time). */
  #timerDue = 0;
  /** The wait before the next poll: `pollMs`, doubled by each round that found nothing. */
  #pollDelay: number;
  #running: Promise<number> | undefined;
  #rerun = false;
  /** A `relaySoon` round is due after the current turn. */
  #soon = false;
  #started = false;
  #stopped = false;
  /**
   * Ids of rows already published, deleted with the next round's claim (one statement per round
   * instead of one more per batch). A crash before that publishes them again once their lease ran
   * out, which at-least-once delivery allows.
   */
  #published: string[] = [];
  #delivering = 0;
  #deliveries: Promise<void> = Promise.resolve();

  constructor(settings: RelaySettings) {
    this.#s = settings;
    this.lease = `${settings.leaseMs} milliseconds`;
    this.#pollDelay = settings.pollMs;
  }

  /** Started, not stopped, and the bus took the last events it was given. */
  get healthy(): boolean {
    return this.#started && !this.#stopped && this.#failures === 0;
  }

  /** Whether a write now may be delivered from memory rather than left to the relay. */
  canDeliverNow(): boolean {
    return this.healthy && this.#delivering < MAX_DIRECT_BATCHES;
  }

  // --- stage 1: claim -------------------------------------------------------------------------

  /** Available rows, leased to this relay, oldest event first. */
  async claimBatch(): Promise<OutboxRow[]> {
    const done = this.#takePublished();
    let claimed: { rows: OutboxRow[] };
    try {
      claimed = await this.#s.run<OutboxRow>(this.#s.statements.claim, [JSON.stringify(done), this.lease]);
    } catch (err) {
      this.#putBack(done);
      throw err;
    }
    return claimed.rows.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  }

  // --- stage 2: publish -----------------------------------------------------------------------

  /** Publishes claimed rows in order; from the first the bus refuses, they wait for the backoff. */
  async publishClaimed(rows: OutboxRow[]): Promise<number> {
    let sent = 0;
    let failedFrom = -1;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      const data = typeof r.data === "string" ? (JSON.parse(r.data) as unknown) : r.data;
      try {
        await this.#s.bus.publish(r.topic, data, { id: r.id, time: r.time });
        this.#published.push(r.id);
        sent++;
      } catch (err) {
        failedFrom = i;
        this.#busRefused(err, rows.length - i);
        break;
      }
    }
    if (failedFrom >= 0) await this.retryLater(rows.slice(failedFrom).map((r) => r.id));
    else this.#failures = 0;
    return sent;
  }

  /** Rows whose publishing failed become available to the relay after the backoff. */
  async retryLater(ids: string[]): Promise<void> {
    await this.#s.run(this.#s.statements.retryLater, [JSON.stringify(ids), `${this.#backoff()} milliseconds`]);
  }

  // --- stage 3: drain -------------------------------------------------------------------------

  /** Relay rounds now until the table is drained or the bus refuses; returns how many were published. */
  flush(): Promise<number> {
    if (this.#running) {
      this.#rerun = true;
      return this.#running;
    }
    this.#running = (async () => {
      let total = 0;
      try {
        for (;;) {
          this.#rerun = false;
          const rows = await this.claimBatch();
          if (rows.length > 0) this.#busy();
          const n = rows.length === 0 ? 0 : await this.publishClaimed(rows);
          total += n;
          // Keep draining while full batches come back and the bus accepts them.
          if (!(n === this.#s.batchSize || this.#rerun) || this.#failures > 0) break;
        }
      } finally {
        this.#running = undefined;
      }
      return total;
    })();
    return this.#running;
  }

  // --- stage 4: schedule ----------------------------------------------------------------------

  /**
   * The next round after `delayMs`, and after it the poll interval (the backoff while the bus is
   * down). A round that found nothing doubles the interval, up to `maxIdlePollMs`.
   */
  schedule(delayMs: number): void {
    if (!this.#started) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timerDue = performance.now() + delayMs;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      let next = this.#s.pollMs;
      this.flush()
        .then((published) => {
          // Rows found reset the interval (in the round); a round that found none lengthens it.
          if (published === 0) next = this.#idle();
        })
        .catch((err) => this.#s.logger?.error({ err: (err as Error).message }, "outbox relay round failed"))
        .finally(() => this.schedule(this.#failures > 0 ? this.#backoff() : next));
    }, delayMs);
    this.#timer.unref();
  }

  /** After rows were written for the relay: a round soon rather than at the next poll, unless the bus is known to be down. */
  written(): void {
    if (this.#started && this.#failures === 0) this.schedule(0);
  }

  /**
   * A round right after the current turn (after a transaction that enqueued has committed), unless
   * the bus is known to be down or the relay is not running. After the turn, so that the answer
   * which follows the commit goes out before the round's statements run; the calls of one turn
   * share that round.
   */
  relaySoon(): void {
    if (!this.#started || this.#failures > 0) return;
    this.#busy();
    if (this.#soon) return;
    this.#soon = true;
    setImmediate(() => {
      this.#soon = false;
      if (!this.#started) return;
      this.flush().catch((err) => this.#s.logger?.warn({ err: (err as Error).message }, "outbox relay round failed"));
    });
  }

  /** Rows were found or written: polls at `pollMs` again, the next one no later than that from now. */
  #busy(): void {
    this.#pollDelay = this.#s.pollMs;
    if (this.#timer && this.#failures === 0 && this.#timerDue > performance.now() + this.#s.pollMs) {
      this.schedule(this.#s.pollMs);
    }
  }

  /** A round found nothing: the wait before the next one, doubled up to the idle ceiling. */
  #idle(): number {
    this.#pollDelay = Math.min(this.#s.maxIdlePollMs, this.#pollDelay * 2);
    return this.#pollDelay;
  }

  // --- beside the rounds: delivery from memory ------------------------------------------------

  /**
   * Publishes rows written leased (no relay claims them) right after their insert, from memory.
   * Should a publish fail, the rest become available to the relay after the backoff; should the
   * process die, they become available when their lease runs out.
   */
  deliver(values: OutboxRow[]): void {
    this.#delivering++;
    this.#deliveries = this.#deliveries
      .then(async () => {
        for (let i = 0; i < values.length; i++) {
          const v = values[i]!;
          try {
            await this.#s.bus.publish(v.topic, v.data, { id: v.id, time: v.time });
            this.#published.push(v.id);
          } catch (err) {
            this.#busRefused(err, values.length - i);
            await this.retryLater(values.slice(i).map((r) => r.id));
            this.schedule(this.#backoff());
            return;
          }
        }
        if (this.#published.length >= this.#s.batchSize) this.schedule(0);
      })
      .catch((err) => this.#s.logger?.warn({ err: (err as Error).message }, "outbox publish failed; the relay retries"))
      .finally(() => {
        this.#delivering--;
      });
  }

  // --- the published ledger -------------------------------------------------------------------

  /** Deletes the rows published since the last claim now (before counting what is pending). */
  async deletePublished(): Promise<void> {
    const done = this.#takePublished();
    if (done.length === 0) return;
    await this.#s.run(this.#s.statements.delete, [JSON.stringify(done)]).catch((err) => {
      this.#putBack(done);
      throw err;
    });
  }

  #takePublished(): string[] {
    const ids = this.#published;
    this.#published = [];
    return ids;
  }

  #putBack(ids: string[]): void {
    this.#published = ids.concat(this.#published);
  }

  // --- health ---------------------------------------------------------------------------------

  #backoff(): number {
    return Math.min(this.#s.maxBackoffMs, 250 * 2 ** Math.min(this.#failures, 10));
  }

  #busRefused(err: unknown, pending: number): void {
    this.#failures++;
    this.#s.logger?.warn(
      { err: (err as Error).message, pending },
      "event bus unavailable; outbox keeps the events and retries",
    );
  }

  // --- lifecycle ------------------------------------------------------------------------------

  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.schedule(0);
  }

  /** Stops the rounds, waits for the one running and for deliveries, and deletes what was published. */
  async stop(): Promise<void> {
    this.#started = false;
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running?.catch(() => {});
    await this.#deliveries;
    const done = this.#takePublished();
    // Left leased when this fails: published again after the lease, which at-least-once allows.
    if (done.length > 0) await this.#s.run(this.#s.statements.delete, [JSON.stringify(done)]).catch(() => {});
  }
}
