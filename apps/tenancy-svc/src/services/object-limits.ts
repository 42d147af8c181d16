import { countRows } from "@agentplane/db";
import { enforceObjectLimit } from "@agentplane/service-kit";
import { type Kysely, sql, type Transaction } from "kysely";
import type { TenancyContext } from "../context.ts";
import type { TenancyDatabase } from "../db/schema.ts";

type OrgLimitedKind = "projects" | "teams" | "api-tokens" | "invitations";

/** How many of a kind an organization holds now (only live tokens and open invitations count). */
function countInOrg(db: Kysely<TenancyDatabase>, kind: OrgLimitedKind, orgId: string): Promise<number> {
  switch (kind) {
    case "projects":
      return countRows(db.selectFrom("projects").where("org_id", "=", orgId));
    case "teams":
      return countRows(db.selectFrom("teams").where("org_id", "=", orgId));
    case "api-tokens":
      return countRows(
        db
          .selectFrom("api_tokens")
          .where("org_id", "=", orgId)
          .where("revoked_at", "is", null)
          .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", sql<Date>`now()`)])),
      );
    case "invitations":
      return countRows(
        db
          .selectFrom("invitations")
          .where("org_id", "=", orgId)
          .where("status", "=", "pending")
          .where("expires_at", ">", sql<Date>`now()`),
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
  switch (kind) {
    case "organizations":
      return countRows(db.selectFrom("org_members").where("user_id", "=", userId).where("role", "=", "owner"));
    case "personal-api-tokens":
      return countRows(
        db
          .selectFrom("api_tokens")
          .where("user_id", "=", userId)
          .where("org_id", "is", null)
          .where("revoked_at", "is", null)
          .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", sql<Date>`now()`)])),
      );
    case "sessions":
      return countRows(
        db
          .selectFrom("browser_sessions")
          .where("user_id", "=", userId)
          .where("revoked_at", "is", null)
          .where("expires_at", ">", sql<Date>`now()`),
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
