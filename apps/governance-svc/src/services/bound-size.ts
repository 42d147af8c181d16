import { lockForTransaction } from "@agentplane/db";
import { ProblemError } from "@agentplane/problem-details";
import { type Kysely, sql } from "kysely";
import { bindingsInForce } from "../db/bindings-in-force.ts";
import type { GovernanceDb } from "../db/schema.ts";

/**
 * What an organization's bindings may bind in all, each binding counting the statements and bytes
 * of the policy version it resolves to. Decisions run on the event loop over every statement that
 * reaches them; without a bound one organization binding the same large policy thirty times made
 * each of its decisions take the governance replica for half a second, and every organization's
 * decisions waited (docs/decisions/0028).
 */
export const MAX_BOUND_STATEMENTS = 1000;
export const MAX_BOUND_CEDAR_BYTES = 1024 * 1024;

export interface BoundSize {
  statements: number;
  bytes: number;
}

/** The statements and bytes of one policy version. */
export async function versionSize(db: Kysely<GovernanceDb>, policyId: string, version: number): Promise<BoundSize> {
  const row = await db
    .selectFrom("policy_versions")
    .select([sql<number>`jsonb_array_length(rules)`.as("statements"), sql<number>`octet_length(cedar)`.as("bytes")])
    .where("policy_id", "=", policyId)
    .where("version", "=", version)
    .executeTakeFirst();
  return { statements: Number(row?.statements ?? 0), bytes: Number(row?.bytes ?? 0) };
}

/**
 * Refuses (409 `limit-exceeded`) a change that would take what the organization binds past the
 * bounds: `added` more, and the bindings that follow `replacing`'s latest version left out (an
 * update of that policy counts them in `added` at their new size). In the change's transaction,
 * under a lock per organization, so concurrent changes count one after the other.
 */
export async function enforceBoundSize(
  trx: Kysely<GovernanceDb>,
  orgId: string,
  added: BoundSize,
  replacing?: string,
): Promise<void> {
  await lockForTransaction(trx, `bound-size:${orgId}`);
  let query = bindingsInForce(trx)
    .select([
      sql<number>`coalesce(sum(jsonb_array_length(v.rules)), 0)`.as("statements"),
      sql<number>`coalesce(sum(octet_length(v.cedar)), 0)`.as("bytes"),
    ])
    .where("b.org_id", "=", orgId);
  if (replacing)
    query = query.where((eb) => eb.not(eb.and([eb("b.policy_id", "=", replacing), eb("b.version", "is", null)])));
  const held = await query.executeTakeFirstOrThrow();
  const statements = Number(held.statements) + added.statements;
  const bytes = Number(held.bytes) + added.bytes;
  if (statements <= MAX_BOUND_STATEMENTS && bytes <= MAX_BOUND_CEDAR_BYTES) return;
  const over =
    statements > MAX_BOUND_STATEMENTS
      ? `${statements} statements (at most ${MAX_BOUND_STATEMENTS})`
      : `${bytes} bytes of Cedar (at most ${MAX_BOUND_CEDAR_BYTES})`;
  throw new ProblemError("limit-exceeded", {
    detail:
      `The organization's bindings would bind ${over}, each binding counting its policy version. ` +
      "Remove a binding, bind one policy once at the organization rather than in each project, or shorten the policies.",
    extensions: {
      kind: "bound-policy-size",
      limit: { statements: MAX_BOUND_STATEMENTS, bytes: MAX_BOUND_CEDAR_BYTES },
    },
  });
}
