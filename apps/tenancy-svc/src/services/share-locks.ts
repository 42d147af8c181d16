import { ProblemError } from "@agentplane/problem-details";
import type { Transaction } from "kysely";
import type { TenancyDatabase } from "../db/schema.ts";

type Trx = Transaction<TenancyDatabase>;

/**
 * The organization's team or project `id`, locked for share until the transaction ends: deleting it
 * waits for the change being stored (and takes it along) or has already happened, and then this is
 * a 404 with `detail`, never a failed insert.
 */
export async function shareRowOfOrg(
  trx: Trx,
  table: "teams" | "projects",
  orgId: string,
  id: string,
  detail: string,
): Promise<void> {
  // Both tables key their rows by `id` under `org_id`; the query is the same for either.
  const row = await trx
    .selectFrom(table as "teams")
    .select("id")
    .where("id", "=", id)
    .where("org_id", "=", orgId)
    .forShare()
    .executeTakeFirst();
  if (!row) throw new ProblemError("not-found", { detail });
}

/**
 * The membership of `userId` in the organization, locked for share until the transaction ends: a
 * removal or a role change, which undoes what depends on it (tokens, teams, invitations), waits for
 * the change being stored or has already happened, and then this is a 404 with `detail`.
 */
export async function shareMembership(trx: Trx, orgId: string, userId: string, detail: string) {
  const member = await trx
    .selectFrom("org_members")
    .select("role")
    .where("org_id", "=", orgId)
    .where("user_id", "=", userId)
    .forShare()
    .executeTakeFirst();
  if (!member) throw new ProblemError("not-found", { detail });
  return member;
}
