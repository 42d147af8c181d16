import type { Principal } from "@agentplane/contracts";
import {
  type DomainEvent,
  withDomainEvents as inTransaction,
  recordDomainEvent as recordInOutbox,
} from "@agentplane/events";
import type { Kysely, Transaction } from "kysely";
import type { ConnectionsContext } from "../context.ts";
import type { ConnectionsDb } from "../db/schema/index.ts";

export type { DomainEvent };

/** Writes an `audit.recorded` domain record to the outbox inside `trx`, the transaction of the change. */
export async function recordDomainEvent(
  ctx: ConnectionsContext,
  trx: Kysely<ConnectionsDb>,
  principal: Principal | undefined,
  event: DomainEvent,
): Promise<void> {
  await recordInOutbox(ctx.outbox, trx, principal, event);
}

/** A record with no state change of its own (a policy decision at a proxy): written to the outbox alone. */
export async function recordDecision(
  ctx: ConnectionsContext,
  principal: Principal | undefined,
  event: DomainEvent,
): Promise<void> {
  await recordDomainEvent(ctx, ctx.db, principal, event);
  ctx.relaySoon();
}

/** Runs `fn` in a transaction and, once it has committed, asks the relay to publish what it recorded. */
export function withDomainEvents<T>(
  ctx: ConnectionsContext,
  fn: (trx: Transaction<ConnectionsDb>) => Promise<T>,
): Promise<T> {
  return inTransaction(ctx.db, { relaySoon: () => ctx.relaySoon() }, fn);
}
