import { AUDIT_RECORDED, type Principal } from "@agentplane/contracts";
import { type DomainEvent, domainAuditRecord } from "@agentplane/events";
import type { ConnectionsContext } from "../../context.ts";

const MAX_BATCH = 200;

interface Pending {
  principal: Principal;
  event: DomainEvent;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Tool call audit records with group commit: a call waits until its record is in the outbox before
 * it answers, but the records of the calls that arrive while one write is in flight go to the
 * outbox together in the next write, one multi-row INSERT (one commit for many concurrent calls
 * instead of one per call). Nothing is acknowledged before it is written, so a crash loses no answered call's record;
 * a failed write fails the calls it carried.
 */
export class CallAuditWriter {
  private readonly ctx: ConnectionsContext;
  private queue: Pending[] = [];
  private scheduled = false;
  private writing: Promise<void> = Promise.resolve();

  constructor(ctx: ConnectionsContext) {
    this.ctx = ctx;
  }

  /** Resolves once the record is committed to the outbox. */
  record(principal: Principal, event: DomainEvent): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ principal, event, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        void this.flush();
      });
    });
  }

  /** Writes what is queued once the write in flight ends (the records gathered meanwhile go together). */
  flush(): Promise<void> {
    this.writing = this.writing.then(async () => {
      while (this.queue.length) {
        const batch = this.queue.splice(0, MAX_BATCH);
        try {
          // One INSERT of all the records, outside a transaction: it commits on its own (one round
          // trip instead of BEGIN, INSERT, COMMIT), as durably, and the relay publishes them now.
          await this.ctx.outbox.publishMany(
            batch.map(({ principal, event }) => {
              const record = domainAuditRecord(principal, event);
              return { topic: AUDIT_RECORDED, data: record, options: { id: record.id, time: record.time } };
            }),
          );
          for (const p of batch) p.resolve();
        } catch (error) {
          this.ctx.logger.error(
            { err: (error as Error).message, records: batch.length },
            "tool call audit records could not be written",
          );
          for (const p of batch) p.reject(error);
        }
      }
    });
    return this.writing;
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
