import { AUDIT_RECORDED, type AuditRecorded, USAGE_RECORDED, type UsageRecorded } from "@agentplane/contracts";
import type { Bus, EventEnvelope, Subscription } from "@agentplane/events";
import type { Pricing } from "@agentplane/pricing";
import type { Logger } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { AuditDb } from "../db/schema.ts";
import { storeAuditRecords } from "../services/audit-records.ts";
import type { SpendLedger } from "../services/spend.ts";
import { storeUsageRecords } from "../services/usage.ts";
import { MicroBatcher } from "./batcher.ts";
import { storeDeadLetter, writeIsolating } from "./isolate.ts";
import { readAuditEvent, readUsageEvent } from "./validate.ts";

const DROPPED: Promise<void> = Promise.resolve();

export interface ConsumerOptions {
  /** Jobs taken at once per worker; the upper bound of one batch (default 500). */
  concurrency?: number;
  /** Workers per topic and replica (default 2): each fetches and acknowledges jobs on its own connection. */
  workers?: number;
  /** Most rows per insert (default 1000). */
  batchSize?: number;
  /** Longest wait to fill a batch while no write runs (default 20 ms, the producers' own gathering). */
  maxWaitMs?: number;
}

export interface Ingestion {
  /** Events this process dead-lettered since it started (their content was rejected by storage). */
  readonly deadLettered: number;
  /** Writes what is buffered now (tests, shutdown). */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Subscribes to `audit.recorded` and `usage.recorded`. Malformed events are logged and dropped
 * (redelivering them cannot help). A row whose content storage rejects is isolated from its batch,
 * so the rest of the batch is stored, and kept in `dead_letters`, logged and counted; other storage
 * errors fail the jobs so that the bus retries them.
 */
export async function startIngestion(deps: {
  db: Kysely<AuditDb>;
  bus: Bus;
  logger: Logger;
  pricing: Pricing;
  spend: SpendLedger;
  options?: ConsumerOptions | undefined;
}): Promise<Ingestion> {
  const options = deps.options ?? {};
  const batch = { maxSize: options.batchSize ?? 1000, maxWaitMs: options.maxWaitMs ?? 20 };
  let deadLettered = 0;
  const deadLetter =
    (topic: string) =>
    async ({ item, error }: { item: AuditRecorded | UsageRecorded; error: unknown }) => {
      await storeDeadLetter(deps.db, { eventId: item.id, topic, payload: item, error });
      deadLettered++;
      deps.logger.error(
        { eventId: item.id, topic, err: (error as Error).message, deadLettered },
        "event dead-lettered: storage rejects its content",
      );
    };
  const audits = new MicroBatcher<AuditRecorded>(async (items) => {
    await writeIsolating(items, (part) => storeAuditRecords(deps.db, part), deadLetter(AUDIT_RECORDED));
  }, batch);
  const usage = new MicroBatcher<UsageRecorded>(async (items) => {
    const usageDeps = { pricing: deps.pricing, spend: deps.spend, logger: deps.logger };
    await writeIsolating(items, (part) => storeUsageRecords(deps.db, usageDeps, part), deadLetter(USAGE_RECORDED));
  }, batch);

  const subscriptions: Subscription[] = [];
  const concurrency = options.concurrency ?? 500;
  for (let w = 0; w < (options.workers ?? 2); w++) {
    subscriptions.push(
      await deps.bus.subscribe(
        AUDIT_RECORDED,
        (event: EventEnvelope) => {
          const read = readAuditEvent(event.data, event.id);
          if (read.success) return audits.add(read.data);
          deps.logger.warn({ eventId: event.id, issues: read.issues }, "malformed audit event dropped");
          return DROPPED;
        },
        { concurrency },
      ),
    );
    subscriptions.push(
      await deps.bus.subscribe(
        USAGE_RECORDED,
        (event: EventEnvelope) => {
          const read = readUsageEvent(event.data, event.id);
          if (read.success) return usage.add(read.data);
          deps.logger.warn({ eventId: event.id, issues: read.issues }, "malformed usage event dropped");
          return DROPPED;
        },
        { concurrency },
      ),
    );
  }

  return {
    get deadLettered() {
      return deadLettered;
    },
    async drain() {
      await Promise.all([audits.drain(), usage.drain()]);
    },
    async close() {
      await Promise.allSettled(subscriptions.map((s) => s.close()));
      await Promise.all([audits.drain(), usage.drain()]);
    },
  };
}
