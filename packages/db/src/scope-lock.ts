import { createHash } from "node:crypto";
import { type QueryExecutorProvider, sql } from "kysely";

/** A stable 63-bit advisory lock key for a name (the same name, the same key, in every process). */
export function advisoryKey(name: string): bigint {
  return BigInt(`0x${createHash("sha256").update(`agentplane:${name}`).digest("hex").slice(0, 15)}`);
}

/**
 * Holds a transaction-scoped advisory lock on each of `names` until the transaction ends, taken in
 * the order given, in one statement: transactions that take the same name run their
 * check-then-write one after the other, across replicas. For invariants over rows that have no
 * parent row of their own to lock in this service's schema.
 */
export async function lockForTransaction(trx: QueryExecutorProvider, ...names: string[]): Promise<void> {
  const locks = names.map((name) => sql`pg_advisory_xact_lock(${sql.raw(advisoryKey(name).toString())})`);
  await sql`select ${sql.join(locks)}`.execute(trx);
}
