import type { Database, MigrationList } from "@agentplane/db";
import { CompiledQuery, type Generated, type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";
import { type Bus, isoNow } from "./bus.ts";
import { eventId } from "./event-id.ts";
import { canDeliver, handOff } from "./hand-off.ts";
import { outboxStatements } from "./outbox-sql.ts";
import { storablePayload } from "./sanitize.ts";

/** The part of a logger the relay uses (pino's Logger fits). */
export interface OutboxLogger {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const TABLE = "event_outbox";

interface OutboxTable {
  id: string;
  topic: string;
  data: string;
  time: string;
  attempts: Generated<number>;
  available_at: Generated<Date | string>;
  created_at: Generated<Date | string>;
}
interface OutboxDb {
  [TABLE]: OutboxTable;
}

/**
 * The outbox table. It is created in the producer's own schema by the producer's migrator, so add
 * it to your migration list under a name in your own sequence (Kysely requires names to sort after
 * the ones already applied): `{ ...outboxMigrations("0004"), ... }`.
 */
export const outboxMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable(TABLE)
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("topic", "text", (c) => c.notNull())
      .addColumn("data", "jsonb", (c) => c.notNull())
      .addColumn("time", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("available_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema.createIndex(`${TABLE}_available`).on(TABLE).columns(["available_at", "created_at"]).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable(TABLE).execute();
  },
};

export function outboxMigrations(sequence: string): MigrationList {
  return { [`${sequence}_event_outbox`]: outboxMigration };
}

export interface OutboxOptions {
  database: Database;
  /** The producer's Postgres schema, which holds `event_outbox`. */
  schema: string;
  bus: Bus;
  logger?: OutboxLogger;
  /** How often the relay looks for rows written by other replicas or left after a failure (default 250 ms). */
  pollIntervalMs?: number;
  /** Rows claimed per round (default 500). */
  batchSize?: number;
  /** Longest wait between attempts while the bus is down (default 30 s). */
  maxBackoffMs?: number;
  /** A claimed row is retried by any replica after this long if its relay died mid-publish (default 30 s). */
  leaseMs?: number;
  /** How long a hand-off (`PublishManyOptions.handOff`) waits for the consumer before writing rows (default 10 s). */
  handOffTimeoutMs?: number;
}

export interface PublishManyOptions {
  /**
   * Resolve once the events are safe, rather than once their rows are written: where the bus has
   * the consumer in this process (`Bus.deliver`, the all-in-one mode), an event its consumer
   * handled (a durable consumer: stored) needs no row at all, and only the others are written.
   * Either way nothing is lost that was acknowledged. For producers that wait off the request
   * path (a consumer may gather events for some milliseconds before it stores them).
   */
  handOff?: boolean;
}

export interface EnqueueOptions {
  /** The event id consumers deduplicate on (default: a new UUID). */
  id?: string;
  time?: string;
}

/**
 * A durable outbox: events are written to the producer's database in the same transaction as the
 * change they describe, and a relay publishes them to the bus afterwards. While the bus is down the
 * rows stay and are retried with backoff; a request never fails because the bus is unavailable, and
 * a crash loses nothing that was committed. Delivery is at least once (a row published just before
 * a crash is published again), so consumers deduplicate on the event id.
 */
export interface Outbox {
  /** Writes an event inside the caller's transaction (any Kysely handle on the same database). */
  enqueue<T>(trx: Kysely<never>, topic: string, data: T, options?: EnqueueOptions): Promise<string>;
  /** Writes an event right away, for changes that have no transaction of their own. */
  publish<T>(topic: string, data: T, options?: EnqueueOptions): Promise<string>;
  /** Writes several events in one insert (a producer's group commit); returns their ids in order. */
  publishMany<T>(
    events: { topic: string; data: T; options?: EnqueueOptions }[],
    options?: PublishManyOptions,
  ): Promise<string[]>;
  /** One relay round now; returns how many events were published. */
  flush(): Promise<number>;
  /** Publishes soon rather than at the next poll (after a transaction that enqueued has committed). */
  relaySoon(): void;
  /** Events not yet published. */
  pending(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

interface OutboxRow {
  id: string;
  topic: string;
  data: unknown;
  time: string;
}

/** Batches published from memory at once; past this, new events wait for the relay. */
const MAX_DIRECT_BATCHES = 8;

export function createOutbox(options: OutboxOptions): Outbox {
  const db = options.database.forSchema<OutboxDb>(options.schema);
  const bus = options.bus;
  const pollMs = options.pollIntervalMs ?? 250;
  const batchSize = options.batchSize ?? 500;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  const leaseMs = options.leaseMs ?? 30_000;
  const handOffMs = options.handOffTimeoutMs ?? 10_000;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  let rerun = false;
  let started = false;
  let stopped = false;

  const backoff = () => Math.min(maxBackoffMs, 250 * 2 ** Math.min(failures, 10));

  /** A row as `write` takes it: its payload is made storable there, if it needs to be. */
  const row = <T>(topic: string, data: T, opts: EnqueueOptions = {}): OutboxRow => ({
    id: opts.id ?? eventId(),
    topic,
    data,
    time: opts.time ?? isoNow(),
  });

  const statements = outboxStatements(`${options.schema}.${TABLE}`, batchSize);
  const lease = `${leaseMs} milliseconds`;
  const run = <R>(text: string, parameters: unknown[]) =>
    options.database.kysely.executeQuery<R>(CompiledQuery.raw(text, parameters));

  /**
   * Ids of rows already published, deleted with the next relay round's claim (one statement per
   * round instead of one more per batch). A crash before that publishes them again once their lease
   * ran out, which at-least-once delivery allows.
   */
  let published: string[] = [];
  const takePublished = () => {
    const ids = published;
    published = [];
    return ids;
  };
  const putBack = (ids: string[]) => {
    published = ids.concat(published);
  };

  /** Rows whose publishing failed become available to the relay after the backoff. */
  async function retryLater(ids: string[]): Promise<void> {
    await run(statements.retryLater, [JSON.stringify(ids), `${backoff()} milliseconds`]);
  }

  /** One relay round: claim a batch (deleting what was published since), publish it in order. */
  async function relayOnce(): Promise<number> {
    const rows = await claimBatch();
    return rows.length === 0 ? 0 : publishClaimed(rows);
  }

  /** Available rows, leased to this relay, oldest event first. */
  async function claimBatch(): Promise<OutboxRow[]> {
    const done = takePublished();
    let claimed: { rows: OutboxRow[] };
    try {
      claimed = await run(statements.claim, [JSON.stringify(done), lease]);
    } catch (err) {
      putBack(done);
      throw err;
    }
    return claimed.rows.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  }

  /** Publishes claimed rows in order; from the first the bus refuses, they wait for the backoff. */
  async function publishClaimed(rows: OutboxRow[]): Promise<number> {
    let sent = 0;
    let failedFrom = -1;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      const data = typeof r.data === "string" ? (JSON.parse(r.data) as unknown) : r.data;
      try {
        await bus.publish(r.topic, data, { id: r.id, time: r.time });
        published.push(r.id);
        sent++;
      } catch (err) {
        failedFrom = i;
        busRefused(err, rows.length - i);
        break;
      }
    }
    if (failedFrom >= 0) await retryLater(rows.slice(failedFrom).map((r) => r.id));
    else failures = 0;
    return sent;
  }

  function busRefused(err: unknown, pending: number): void {
    failures++;
    options.logger?.warn(
      { err: (err as Error).message, pending },
      "event bus unavailable; outbox keeps the events and retries",
    );
  }

  /**
   * Events written outside a transaction are published right after their insert, from memory:
   * their rows are written leased (no relay claims them) and deleted with the next relay round.
   * Should a publish fail, the rest become available to the relay after the backoff; should the
   * process die, they become available when their lease runs out.
   */
  let delivering = 0;
  let deliveries: Promise<void> = Promise.resolve();
  const direct = () => started && !stopped && failures === 0 && delivering < MAX_DIRECT_BATCHES;
  function deliver(values: OutboxRow[]): void {
    delivering++;
    deliveries = deliveries
      .then(async () => {
        for (let i = 0; i < values.length; i++) {
          const v = values[i]!;
          try {
            await bus.publish(v.topic, v.data, { id: v.id, time: v.time });
            published.push(v.id);
          } catch (err) {
            busRefused(err, values.length - i);
            await retryLater(values.slice(i).map((r) => r.id));
            schedule(backoff());
            return;
          }
        }
        if (published.length >= batchSize) schedule(0);
      })
      .catch((err) => options.logger?.warn({ err: (err as Error).message }, "outbox publish failed; the relay retries"))
      .finally(() => {
        delivering--;
      });
  }

  /**
   * Writes rows whose payloads were not made storable yet. Their JSON text shows whether any has
   * something to replace: NUL and lone surrogates come out of JSON.stringify only as `\u` escapes,
   * so a text without one needs nothing, and the payloads are published as they are (one search of
   * the batch's text instead of a walk over every payload). Otherwise each payload is made
   * storable and the batch encoded again.
   */
  async function write(values: OutboxRow[], viaRelay = false): Promise<void> {
    const now = !viaRelay && direct();
    let text = JSON.stringify(values);
    if (text.includes("\\u")) {
      for (const v of values) v.data = storablePayload(v.data);
      text = JSON.stringify(values);
    }
    await run(statements.insert, [text, now ? lease : "0 milliseconds"]);
    if (now) deliver(values);
    // Publish soon rather than at the next poll, unless the bus is known to be down.
    else if (started && failures === 0) schedule(0);
  }

  function flush(): Promise<number> {
    if (running) {
      rerun = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      try {
        for (;;) {
          rerun = false;
          const n = await relayOnce();
          total += n;
          // Keep draining while full batches come back and the bus accepts them.
          if (!(n === batchSize || rerun) || failures > 0) break;
        }
      } finally {
        running = undefined;
      }
      return total;
    })();
    return running;
  }

  function schedule(delayMs: number): void {
    if (!started) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      flush()
        .catch((err) => options.logger?.error({ err: (err as Error).message }, "outbox relay round failed"))
        .finally(() => schedule(failures > 0 ? backoff() : pollMs));
    }, delayMs);
    timer.unref();
  }

  return {
    async enqueue(trx, topic, data, opts) {
      const value = row(topic, storablePayload(data), opts);
      await (trx as unknown as Kysely<OutboxDb>)
        .withSchema(options.schema)
        .insertInto(TABLE)
        .values({ ...value, data: JSON.stringify(value.data) })
        .execute();
      return value.id;
    },
    async publish(topic, data, opts) {
      const value = row(topic, data, opts);
      await write([value]);
      return value.id;
    },
    async publishMany(events, opts) {
      if (events.length === 0) return [];
      const values = events.map((e) => row(e.topic, e.data, e.options));
      if (opts?.handOff && canDeliver(bus) && started && !stopped && failures === 0) {
        // What a consumer would have read from the table.
        for (const v of values) v.data = storablePayload(v.data);
        const left = await handOff(bus, values, handOffMs);
        // Written available at once, so the relay delivers them again soon.
        if (left.length > 0) await write(left, true);
      } else {
        await write(values);
      }
      return values.map((v) => v.id);
    },
    flush,
    relaySoon() {
      // Unless the bus is known to be down (the backoff schedule stands) or the relay was stopped.
      if (stopped || failures > 0) return;
      flush().catch((err) => options.logger?.warn({ err: (err as Error).message }, "outbox relay round failed"));
    },
    async pending() {
      const done = takePublished();
      if (done.length > 0) {
        await run(statements.delete, [JSON.stringify(done)]).catch((err) => {
          putBack(done);
          throw err;
        });
      }
      const result = await db
        .selectFrom(TABLE)
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow();
      return Number(result.n);
    },
    start() {
      if (started) return;
      started = true;
      schedule(0);
    },
    async stop() {
      started = false;
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running?.catch(() => {});
      await deliveries;
      const done = takePublished();
      // Left leased when this fails: published again after the lease, which at-least-once allows.
      if (done.length > 0) await run(statements.delete, [JSON.stringify(done)]).catch(() => {});
    },
  };
}
