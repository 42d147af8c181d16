import { type Invitation, newId, type OrgRole, orgRoleAtLeast, type Principal } from "@agentplane/contracts";
import { lockForTransaction } from "@agentplane/db";
import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import type { Caller, Requester } from "@agentplane/service-kit";
import { sql } from "kysely";
import { actorOf } from "../authz/local-authorizer.ts";
import type { TenancyContext } from "../context.ts";
import { orgRoleOf } from "./caller.ts";
import { tokenMatches } from "./invitation-links.ts";
import { enforceOrgLimit } from "./object-limits.ts";
import { page, toInvitation } from "./serialize.ts";
import { shareMembership } from "./share-locks.ts";
import { getUser } from "./users.ts";

export async function createInvitation(
  ctx: TenancyContext,
  caller: Caller,
  input: { email: string; role: OrgRole; expiresInSeconds?: number | undefined },
): Promise<Invitation> {
  const { orgId, principal } = caller;
  if (!orgRoleAtLeast(orgRoleOf(caller), input.role)) {
    throw new ProblemError("forbidden", { detail: "You cannot invite with a role above your own" });
  }
  const email = input.email.trim();
  const ttl = input.expiresInSeconds ?? ctx.config.invitationTtlSeconds;
  const senderId = actorOf(principal)?.userId ?? principal.id;
  const row = await withDomainEvents(ctx, async (trx) => {
    // The sender's membership stays locked until the invitation is stored: a demotion or removal,
    // which revokes the sender's invitations above what they may still grant, waits for it (and
    // revokes it) or has already happened and is seen here.
    const sender = await shareMembership(trx, orgId, senderId, `Organization ${orgId} was not found`);
    if (!orgRoleAtLeast(sender.role, input.role)) {
      throw new ProblemError("forbidden", { detail: "You cannot invite with a role above your own" });
    }
    // One address, one pending invitation: two sent at once are counted one after the other.
    await lockForTransaction(trx, `invitation:${orgId}:${email.toLowerCase()}`);
    const member = await trx
      .selectFrom("org_members as m")
      .innerJoin("users as u", "u.id", "m.user_id")
      .select("m.user_id")
      .where("m.org_id", "=", orgId)
      .where(sql`lower(u.email)`, "=", email.toLowerCase())
      .executeTakeFirst();
    if (member) throw new ProblemError("conflict", { detail: `${email} is already a member` });
    const pending = await trx
      .selectFrom("invitations")
      .select("id")
      .where("org_id", "=", orgId)
      .where(sql`lower(email)`, "=", email.toLowerCase())
      .where("status", "=", "pending")
      .where("expires_at", ">", new Date())
      .executeTakeFirst();
    if (pending)
      throw new ProblemError("conflict", { detail: `${email} already has a pending invitation (${pending.id})` });
    await enforceOrgLimit(ctx, trx, "invitations", orgId);
    const row = await trx
      .insertInto("invitations")
      .values({
        id: newId("invitation"),
        org_id: orgId,
        email,
        role: input.role,
        status: "pending",
        invited_by: senderId,
        expires_at: new Date(Date.now() + ttl * 1000),
        responded_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordDomainEvent(ctx, trx, principal, {
      action: "invitation.created",
      orgId,
      targetType: "invitation",
      targetId: row.id,
      details: { role: row.role },
      requestId: caller.requestId,
    });
    return row;
  });
  return toInvitation(row);
}

export async function listOrgInvitations(
  ctx: TenancyContext,
  caller: Caller,
  query: { limit: number; cursor?: string | undefined },
): Promise<{ items: Invitation[]; nextCursor?: string }> {
  let q = ctx.db
    .selectFrom("invitations")
    .selectAll()
    .where("org_id", "=", caller.orgId)
    .orderBy("id")
    .limit(query.limit + 1);
  if (query.cursor) q = q.where("id", ">", query.cursor);
  const result = page(await q.execute(), query.limit);
  return {
    items: result.items.map((r) => toInvitation(r)),
    ...(result.nextCursor ? { nextCursor: result.nextCursor } : {}),
  };
}

export async function revokeInvitation(
  ctx: TenancyContext,
  caller: Caller,
  input: { invitationId: string },
): Promise<void> {
  const { orgId } = caller;
  const { invitationId } = input;
  await withDomainEvents(ctx, async (trx) => {
    const row = await trx
      .selectFrom("invitations")
      .select(["status", "role"])
      .where("id", "=", invitationId)
      .where("org_id", "=", orgId)
      .forUpdate()
      .executeTakeFirst();
    if (!row) throw new ProblemError("not-found", { detail: `Invitation ${invitationId} was not found` });
    // As for members: an invitation above one's own role is not one's to take back.
    if (!orgRoleAtLeast(orgRoleOf(caller), row.role)) {
      throw new ProblemError("forbidden", { detail: "You cannot revoke an invitation with a role above your own" });
    }
    if (row.status !== "pending") {
      throw new ProblemError("conflict", { detail: `The invitation is already ${row.status}` });
    }
    await trx
      .updateTable("invitations")
      .set({ status: "revoked", responded_at: new Date() })
      .where("id", "=", invitationId)
      .execute();
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "invitation.revoked",
      orgId,
      targetType: "invitation",
      targetId: invitationId,
      details: { role: row.role },
      requestId: caller.requestId,
    });
  });
}

/**
 * The caller's user and email; `boundOrgId` when the caller is a token bound to an organization,
 * which acts in that organization only (as it cannot create another one): another one's
 * invitations are not its to see or answer. `vouched`: an identity provider vouches for the
 * email (only the addresses of users it signs in are verified, decision 0036). A user made by an
 * invitation link has the address its sender typed: an admin of any organization can make one for
 * any address, so that address proves nothing to another organization.
 */
async function callerEmail(
  ctx: TenancyContext,
  principal: Principal,
): Promise<{ userId: string; email?: string; vouched: boolean; boundOrgId?: string }> {
  const actor = actorOf(principal);
  if (!actor) throw new ProblemError("forbidden", { detail: "Only users can hold invitations" });
  const user = await getUser(ctx.db, actor.userId);
  const identity = user?.email
    ? await ctx.db
        .selectFrom("user_identities")
        .select("user_id")
        .where("user_id", "=", actor.userId)
        .limit(1)
        .executeTakeFirst()
    : undefined;
  return {
    userId: actor.userId,
    ...(user?.email ? { email: user.email } : {}),
    vouched: identity !== undefined,
    ...(actor.orgId ? { boundOrgId: actor.orgId } : {}),
  };
}

/** The pending invitations addressed to the caller's email, in every organization. */
export async function listMyInvitations(ctx: TenancyContext, caller: Requester): Promise<Invitation[]> {
  const { email, vouched, boundOrgId } = await callerEmail(ctx, caller.principal);
  if (!email || !vouched) return [];
  let q = ctx.db
    .selectFrom("invitations as i")
    .innerJoin("orgs as o", "o.id", "i.org_id")
    .selectAll("i")
    .select("o.name as org_name")
    .where(sql`lower(i.email)`, "=", email.toLowerCase())
    .where("i.status", "=", "pending")
    .where("i.expires_at", ">", new Date());
  if (boundOrgId) q = q.where("i.org_id", "=", boundOrgId);
  const rows = await q.orderBy("i.id").execute();
  return rows.map((r) => toInvitation(r, r.org_name));
}

/**
 * Accepting or declining: the invitation must be addressed to the caller's email, vouched for by
 * an identity provider or proven by the token of the invitation's link, else it is not found.
 */
export async function respondToInvitation(
  ctx: TenancyContext,
  caller: Requester,
  input: { invitationId: string; answer: "accepted" | "declined"; token?: string | undefined },
): Promise<{ invitationId: string; orgId: string; userId: string; role: OrgRole }> {
  const { invitationId, answer } = input;
  const { userId, email, vouched, boundOrgId } = await callerEmail(ctx, caller.principal);
  const notFound = new ProblemError("not-found", { detail: `Invitation ${invitationId} was not found` });
  if (!email) throw notFound;
  if (!vouched && !(input.token && tokenMatches(ctx, invitationId, input.token))) throw notFound;
  return withDomainEvents(ctx, async (trx) => {
    const row = await trx
      .selectFrom("invitations")
      .selectAll()
      .where("id", "=", invitationId)
      .forUpdate()
      .executeTakeFirst();
    if (!row || row.email.toLowerCase() !== email.toLowerCase()) throw notFound;
    if (boundOrgId && row.org_id !== boundOrgId) {
      throw new ProblemError("forbidden", {
        detail: "A token bound to an organization cannot answer invitations to another organization",
      });
    }
    // Revoked, as expired, is gone for good (410); accepted or declined is an answer given (409).
    if (row.status === "revoked") throw new ProblemError("gone", { detail: "The invitation was revoked" });
    if (row.status !== "pending")
      throw new ProblemError("conflict", { detail: `The invitation is already ${row.status}` });
    if (new Date(row.expires_at).getTime() <= Date.now()) {
      throw new ProblemError("gone", { detail: "The invitation has expired" });
    }
    await trx
      .updateTable("invitations")
      .set({ status: answer, responded_at: new Date() })
      .where("id", "=", invitationId)
      .execute();
    if (answer === "accepted") {
      const existing = await trx
        .selectFrom("org_members")
        .select("role")
        .where("org_id", "=", row.org_id)
        .where("user_id", "=", userId)
        .executeTakeFirst();
      if (existing) throw new ProblemError("conflict", { detail: "You are already a member of this organization" });
      await trx.insertInto("org_members").values({ org_id: row.org_id, user_id: userId, role: row.role }).execute();
      await recordDomainEvent(ctx, trx, caller.principal, {
        action: "invitation.accepted",
        orgId: row.org_id,
        targetType: "invitation",
        targetId: invitationId,
        details: { userId, role: row.role },
        requestId: caller.requestId,
      });
    } else {
      await recordDomainEvent(ctx, trx, caller.principal, {
        action: "invitation.declined",
        orgId: row.org_id,
        targetType: "invitation",
        targetId: invitationId,
        details: { userId, role: row.role },
        requestId: caller.requestId,
      });
    }
    return { invitationId, orgId: row.org_id, userId, role: row.role };
  });
}
