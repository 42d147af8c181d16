import { enforceObjectLimit } from "@agentplane/service-kit";
import { type Kysely, sql, type Transaction } from "kysely";
import type { TenancyContext } from "../context.ts";
import type { TenancyDatabase } from "../db/schema.ts";

type OrgLimitedKind = "projects" | "teams" | "api-tokens" | "invitations";

/** How many of a kind an organization holds now (only live tokens and open invitations count). */
function countInOrg(db: Kysely<TenancyDatabase>, kind: OrgLimitedKind, orgId: string): Promise<number> {
  const count = async (q: Promise<{ n: string | number | bigint }>) => Number((await q).n);
  switch (kind) {
    case "projects":
      return count(
        db
          .selectFrom("projects")
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("org_id", "=", orgId)
          .executeTakeFirstOrThrow(),
      );
    case "teams":
      return count(
        db
          .selectFrom("teams")
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("org_id", "=", orgId)
          .executeTakeFirstOrThrow(),
      );
    case "api-tokens":
      return count(
        db
          .selectFrom("api_tokens")
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("org_id", "=", orgId)
          .where("revoked_at", "is", null)
          .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", sql<Date>`now()`)]))
          .executeTakeFirstOrThrow(),
      );
    case "invitations":
      return count(
        db
          .selectFrom("invitations")
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("org_id", "=", orgId)
          .where("status", "=", "pending")
          .where("expires_at", ">", sql<Date>`now()`)
          .executeTakeFirstOrThrow(),
      );
  }
}

/** Refuses a create past the organization's limit of its kind; in the create's transaction, before the insert. */
export function enforceOrgLimit(
  ctx: TenancyContext,
  trx: Transaction<TenancyDatabase>,
  kind: OrgLimitedKind,
  orgId: string,
): Promise<void> {
  return enforceObjectLimit(trx, ctx.config.objectLimits, {
    kind,
    holder: "organization",
    holderId: orgId,
    count: () => countInOrg(trx, kind, orgId),
  });
}

type UserLimitedKind = "organizations" | "personal-api-tokens" | "sessions";

/**
 * How many of a kind a user holds now: the organizations they own (every organization keeps an
 * owner, so this bounds how many exist), their live personal tokens and their open sessions.
 */
function countOfUser(db: Kysely<TenancyDatabase>, kind: UserLimitedKind, userId: string): Promise<number> {
  const count = async (q: Promise<{ n: string | number | bigint }>) => Number((await q).n);
  switch (kind) {
    case "organizations":
      return count(
        db
          .selectFrom("org_members")
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("user_id", "=", userId)
          .where("role", "=", "owner")
          .executeTakeFirstOrThrow(),
      );
    case "personal-api-tokens":
      return count(
        db
          .selectFrom("api_tokens")
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("user_id", "=", userId)
          .where("org_id", "is", null)
          .where("revoked_at", "is", null)
          .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", sql<Date>`now()`)]))
          .executeTakeFirstOrThrow(),
      );
    case "sessions":
      return count(
        db
          .selectFrom("browser_sessions")
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("user_id", "=", userId)
          .where("revoked_at", "is", null)
          .where("expires_at", ">", sql<Date>`now()`)
          .executeTakeFirstOrThrow(),
      );
  }
}

/** Refuses a create past the user's limit of its kind; in the create's transaction, before the insert. */
export function enforceUserLimit(
  ctx: TenancyContext,
  trx: Transaction<TenancyDatabase>,
  kind: UserLimitedKind,
  userId: string,
): Promise<void> {
  return enforceObjectLimit(trx, ctx.config.objectLimits, {
    kind,
    holder: "user",
    holderId: userId,
    count: () => countOfUser(trx, kind, userId),
  });
}
