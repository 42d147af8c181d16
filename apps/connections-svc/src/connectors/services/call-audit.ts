import type { Principal } from "@agentplane/contracts";
import type { ConnectionsContext } from "../../context.ts";
import { type ConnectorAuditEvent, recordConnectorEvent } from "./platform.ts";

const FLUSH_AFTER_MS = 20;
const MAX_BATCH = 200;

/**
 * Tool call audit records, written behind the response: calls queue their record and a batch goes to
 * the outbox in one transaction (one commit for many calls instead of one per call, which cost more
 * than the call itself). The outbox relay's polling publishes them. `close` writes what is queued;
 * a process that dies within the flush delay loses at most those records.
 */
export class CallAuditWriter {
  private readonly ctx: ConnectionsContext;
  private queue: Array<{ principal: Principal; event: ConnectorAuditEvent }> = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(ctx: ConnectionsContext) {
    this.ctx = ctx;
  }

  record(principal: Principal, event: ConnectorAuditEvent): void {
    this.queue.push({ principal, event });
    if (this.queue.length >= MAX_BATCH) this.schedule(0);
    else this.schedule(FLUSH_AFTER_MS);
  }

  private schedule(delayMs: number): void {
    if (this.timer && delayMs > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delayMs);
  }

  /** Writes every queued record (in order, one transaction per batch). */
  flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    if (!batch.length) return this.writing;
    this.writing = this.writing.then(async () => {
      try {
        await this.ctx.db.transaction().execute(async (trx) => {
          for (const { principal, event } of batch) await recordConnectorEvent(this.ctx, trx, principal, event);
        });
      } catch (error) {
        this.ctx.logger.error(
          { err: (error as Error).message, records: batch.length },
          "tool call audit records could not be written",
        );
      }
    });
    return this.writing;
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
