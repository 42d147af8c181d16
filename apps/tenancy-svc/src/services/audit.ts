import type { Principal } from "@agentplane/contracts";
import {
  type DomainEvent,
  withDomainEvents as inTransaction,
  recordDomainEvent as recordInOutbox,
} from "@agentplane/events";
import type { Kysely, Transaction } from "kysely";
import type { TenancyContext } from "../context.ts";
import type { TenancyDatabase } from "../db/schema.ts";

export type { DomainEvent };

/** Tenancy's use of the shared outbox write (packages/events): the record commits with the change. */
export async function recordDomainEvent(
  ctx: TenancyContext,
  trx: Kysely<TenancyDatabase>,
  principal: Principal | undefined,
  event: DomainEvent,
): Promise<void> {
  await recordInOutbox(ctx.outbox, trx, principal, event);
}

/** Runs `fn` in a transaction and, once it has committed, asks the relay to publish what it recorded. */
export function withDomainEvents<T>(
  ctx: TenancyContext,
  fn: (trx: Transaction<TenancyDatabase>) => Promise<T>,
): Promise<T> {
  return inTransaction(ctx.db, ctx, fn);
}
