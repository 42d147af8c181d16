import { type Member, ORG_ROLES, type OrgRole, orgRoleAtLeast } from "@agentplane/contracts";
import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import type { Caller } from "@agentplane/service-kit";
import { type Kysely, sql, type Transaction } from "kysely";
import type { TenancyContext } from "../context.ts";
import type { TenancyDatabase } from "../db/schema.ts";
import { orgRoleOf } from "./caller.ts";
import { page, toMember } from "./serialize.ts";

type Db = Kysely<TenancyDatabase>;

function memberQuery(db: Db, orgId: string) {
  return db
    .selectFrom("org_members as m")
    .innerJoin("users as u", "u.id", "m.user_id")
    .select(["m.org_id", "m.user_id", "m.role", "m.created_at", "u.email", "u.display_name"])
    .where("m.org_id", "=", orgId);
}

export async function listMembers(
  ctx: TenancyContext,
  caller: Caller,
  query: { limit: number; cursor?: string | undefined },
): Promise<{ items: Member[]; nextCursor?: string }> {
  let q = memberQuery(ctx.db, caller.orgId)
    .orderBy("m.user_id")
    .limit(query.limit + 1);
  if (query.cursor) q = q.where("m.user_id", ">", query.cursor);
  const rows = (await q.execute()).map((r) => ({ ...r, id: r.user_id }));
  const result = page(rows, query.limit);
  return {
    items: result.items.map((r) => toMember(r, r)),
    ...(result.nextCursor ? { nextCursor: result.nextCursor } : {}),
  };
}

export async function getMember(ctx: TenancyContext, caller: Caller, input: { userId: string }): Promise<Member> {
  const { userId } = input;
  const row = await memberQuery(ctx.db, caller.orgId).where("m.user_id", "=", userId).executeTakeFirst();
  if (!row) throw new ProblemError("not-found", { detail: `Member ${userId} was not found` });
  return toMember(row, row);
}

/** Locks the owner rows of the organization and counts them: the last-owner rule holds under races. */
async function lockedOwnerCount(trx: Transaction<TenancyDatabase>, orgId: string): Promise<number> {
  const owners = await trx
    .selectFrom("org_members")
    .select("user_id")
    .where("org_id", "=", orgId)
    .where("role", "=", "owner")
    .forUpdate()
    .execute();
  return owners.length;
}

/** Only owners may hand out the owner role or change or remove an owner. */
function assertMayTouch(callerRole: OrgRole, targetRole: OrgRole, newRole?: OrgRole): void {
  if ((targetRole === "owner" || newRole === "owner") && callerRole !== "owner") {
    throw new ProblemError("forbidden", { detail: "Only owners can grant the owner role or change an owner" });
  }
  if (newRole && !orgRoleAtLeast(callerRole, newRole)) {
    throw new ProblemError("forbidden", { detail: "You cannot grant a role above your own" });
  }
}

/**
 * Revokes the member's pending invitations that rank above `role` (all of them without one, when
 * the member leaves): an invitation grants no more than its sender can still grant, so a demoted
 * or removed admin cannot come back, or back up, through one sent to an address of their own.
 */
async function revokeInvitationsOf(
  ctx: TenancyContext,
  trx: Transaction<TenancyDatabase>,
  caller: Caller,
  userId: string,
  role: OrgRole | undefined,
): Promise<void> {
  let q = trx
    .updateTable("invitations")
    .set({ status: "revoked", responded_at: new Date() })
    .where("org_id", "=", caller.orgId)
    .where("invited_by", "=", userId)
    .where("status", "=", "pending");
  if (role) {
    const above = ORG_ROLES.filter((r) => !orgRoleAtLeast(role, r));
    if (above.length === 0) return;
    q = q.where("role", "in", above);
  }
  const revoked = await q.returning(["id", "role"]).execute();
  for (const invitation of revoked.sort((a, b) => a.id.localeCompare(b.id))) {
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "invitation.revoked",
      orgId: caller.orgId,
      targetType: "invitation",
      targetId: invitation.id,
      details: { role: invitation.role, reason: role ? "sender_demoted" : "sender_removed" },
      requestId: caller.requestId,
    });
  }
}

export async function updateMemberRole(
  ctx: TenancyContext,
  caller: Caller,
  input: { userId: string; role: OrgRole },
): Promise<Member> {
  const { orgId } = caller;
  const { userId, role } = input;
  await withDomainEvents(ctx, async (trx) => {
    const owners = await lockedOwnerCount(trx, orgId);
    const current = await trx
      .selectFrom("org_members")
      .select("role")
      .where("org_id", "=", orgId)
      .where("user_id", "=", userId)
      .forUpdate()
      .executeTakeFirst();
    if (!current) throw new ProblemError("not-found", { detail: `Member ${userId} was not found` });
    assertMayTouch(orgRoleOf(caller), current.role, role);
    if (current.role === "owner" && role !== "owner" && owners <= 1) {
      throw new ProblemError("conflict", { detail: "The organization must keep at least one owner" });
    }
    await trx
      .updateTable("org_members")
      .set({ role })
      .where("org_id", "=", orgId)
      .where("user_id", "=", userId)
      .execute();
    if (current.role !== role) {
      await recordDomainEvent(ctx, trx, caller.principal, {
        action: "member.role_changed",
        orgId,
        targetType: "user",
        targetId: userId,
        details: { from: current.role, to: role },
        requestId: caller.requestId,
      });
      await revokeInvitationsOf(ctx, trx, caller, userId, role);
    }
  });
  return getMember(ctx, caller, { userId });
}

/** Removes a member, with their team memberships, direct project grants and tokens in the org. */
export async function removeMember(ctx: TenancyContext, caller: Caller, input: { userId: string }): Promise<void> {
  const { orgId } = caller;
  const { userId } = input;
  const callerRole = orgRoleOf(caller);
  await withDomainEvents(ctx, async (trx) => {
    const owners = await lockedOwnerCount(trx, orgId);
    const current = await trx
      .selectFrom("org_members")
      .select("role")
      .where("org_id", "=", orgId)
      .where("user_id", "=", userId)
      .forUpdate()
      .executeTakeFirst();
    if (!current) throw new ProblemError("not-found", { detail: `Member ${userId} was not found` });
    // Leaving on one's own is allowed for every role; removing someone else follows the role rules,
    // and so does a token removing its own user when it ranks below that user (an owner's admin-role
    // token cannot make the owner leave).
    const self = caller.principal.id === userId || caller.principal.userId === userId;
    if (!self || !orgRoleAtLeast(callerRole, current.role)) {
      assertMayTouch(callerRole, current.role);
    }
    if (current.role === "owner" && owners <= 1) {
      throw new ProblemError("conflict", { detail: "The last owner of an organization cannot be removed" });
    }
    await trx.deleteFrom("org_members").where("org_id", "=", orgId).where("user_id", "=", userId).execute();
    await trx
      .deleteFrom("team_members")
      .where("user_id", "=", userId)
      .where("team_id", "in", trx.selectFrom("teams").select("id").where("org_id", "=", orgId))
      .execute();
    await trx
      .deleteFrom("project_members")
      .where("user_id", "=", userId)
      .where("project_id", "in", trx.selectFrom("projects").select("id").where("org_id", "=", orgId))
      .execute();
    await trx
      .updateTable("api_tokens")
      .set({ revoked_at: sql<Date>`now()` })
      .where("org_id", "=", orgId)
      .where("user_id", "=", userId)
      .where("revoked_at", "is", null)
      .execute();
    await revokeInvitationsOf(ctx, trx, caller, userId, undefined);
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "member.removed",
      orgId,
      targetType: "user",
      targetId: userId,
      details: { role: current.role },
      requestId: caller.requestId,
    });
  });
}
