import type { Database, MigrationList } from "@agentplane/db";
import { CompiledQuery, type Generated, type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";
import { type Bus, isoNow } from "./bus.ts";
import { eventId } from "./event-id.ts";
import { canDeliver, handOff } from "./hand-off.ts";
import { type OutboxLogger, OutboxRelay, type OutboxRow, type RunStatement } from "./outbox-relay.ts";
import { outboxStatements } from "./outbox-sql.ts";
import { storablePayload } from "./sanitize.ts";

export type { OutboxLogger } from "./outbox-relay.ts";

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
  /**
   * While its rounds find nothing, the relay doubles its poll interval up to this ceiling (default
   * 2 s; never below `pollIntervalMs`); a round that finds rows or `relaySoon()` brings it back to
   * `pollIntervalMs`. Rows another process wrote without telling this one wait at most this long.
   */
  maxIdlePollMs?: number;
  /** Rows claimed per round (default 500). */
  batchSize?: number;
  /** Longest wait between attempts while the bus is down (default 30 s). */
  maxBackoffMs?: number;
  /** A claimed row is retried by any replica after this long if its relay died mid-publish (default 30 s). */
  leaseMs?: number;
  /** How long a hand-off (`PublishManyOptions.handOff`) waits for the consumer before writing rows (default 10 s). */
  handOffTimeoutMs?: number;
}

/** What a deployable may tune of its outbox relay, under `eventRelay` in its config. */
export type OutboxTuning = Pick<OutboxOptions, "pollIntervalMs" | "maxIdlePollMs" | "maxBackoffMs">;

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
  /**
   * Publishes right after the current turn rather than at the next poll (after a transaction that
   * enqueued has committed); nothing until the outbox is started.
   */
  relaySoon(): void;
  /** Events not yet published. */
  pending(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

export function createOutbox(options: OutboxOptions): Outbox {
  const db = options.database.forSchema<OutboxDb>(options.schema);
  const bus = options.bus;
  const pollMs = options.pollIntervalMs ?? 250;
  const batchSize = options.batchSize ?? 500;
  const handOffMs = options.handOffTimeoutMs ?? 10_000;
  const statements = outboxStatements(`${options.schema}.${TABLE}`, batchSize);
  const run: RunStatement = (text, parameters) =>
    options.database.kysely.executeQuery(CompiledQuery.raw(text, parameters));
  const relay = new OutboxRelay({
    bus,
    statements,
    run,
    logger: options.logger,
    pollMs,
    maxIdlePollMs: Math.max(pollMs, options.maxIdlePollMs ?? 2_000),
    batchSize,
    maxBackoffMs: options.maxBackoffMs ?? 30_000,
    leaseMs: options.leaseMs ?? 30_000,
  });

  /** A row as `write` takes it: its payload is made storable there, if it needs to be. */
  const row = <T>(topic: string, data: T, opts: EnqueueOptions = {}): OutboxRow => ({
    id: opts.id ?? eventId(),
    topic,
    data,
    time: opts.time ?? isoNow(),
  });

  /**
   * Writes rows whose payloads were not made storable yet. Their JSON text shows whether any has
   * something to replace: NUL and lone surrogates come out of JSON.stringify only as `\u` escapes,
   * so a text without one needs nothing, and the payloads are published as they are (one search of
   * the batch's text instead of a walk over every payload). Otherwise each payload is made
   * storable and the batch encoded again. While the bus is healthy, rows written outside a
   * transaction are written leased and delivered from memory; otherwise the relay takes them.
   */
  async function write(values: OutboxRow[], viaRelay = false): Promise<void> {
    const now = !viaRelay && relay.canDeliverNow();
    let text = JSON.stringify(values);
    if (text.includes("\\u")) {
      for (const v of values) v.data = storablePayload(v.data);
      text = JSON.stringify(values);
    }
    await run(statements.insert, [text, now ? relay.lease : "0 milliseconds"]);
    if (now) relay.deliver(values);
    else relay.written();
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
      if (opts?.handOff && canDeliver(bus) && relay.healthy) {
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
    flush: () => relay.flush(),
    relaySoon: () => relay.relaySoon(),
    async pending() {
      await relay.deletePublished();
      const result = await db
        .selectFrom(TABLE)
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow();
      return Number(result.n);
    },
    start: () => relay.start(),
    stop: () => relay.stop(),
  };
}
