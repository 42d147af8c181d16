import { AUDIT_RECORDED, type Principal } from "@agentplane/contracts";
import {
  type DomainEvent,
  domainAuditRecord,
  withDomainEvents as inTransaction,
  recordDomainEvent as recordInOutbox,
} from "@agentplane/events";
import type { Kysely, Transaction } from "kysely";
import type { GovernanceContext } from "../context.ts";
import type { GovernanceDb } from "../db/schema.ts";

export type { DomainEvent };

/** Writes an `audit.recorded` record to the outbox inside `trx`, the transaction of the change. */
export async function recordDomainEvent(
  ctx: GovernanceContext,
  trx: Kysely<GovernanceDb>,
  principal: Principal | undefined,
  event: DomainEvent,
): Promise<void> {
  await recordInOutbox(ctx.outbox, trx, principal, event);
}

/** An audit record with no change behind it (a denial): written to the outbox on its own. */
export async function recordEvent(ctx: GovernanceContext, principal: Principal | undefined, event: DomainEvent) {
  const data = domainAuditRecord(principal, event);
  await ctx.outbox.publish(AUDIT_RECORDED, data, { id: data.id, time: data.time });
  ctx.relaySoon();
}

/** Runs `fn` in a transaction and asks the relay to publish what it recorded once it committed. */
export function withDomainEvents<T>(
  ctx: GovernanceContext,
  fn: (trx: Transaction<GovernanceDb>) => Promise<T>,
): Promise<T> {
  return inTransaction(ctx.db, { relaySoon: () => ctx.relaySoon() }, fn);
}
