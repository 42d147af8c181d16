import { createHmac, timingSafeEqual } from "node:crypto";
import type { Invitation, InvitationPreview, OrgRole, Principal } from "@agentplane/contracts";
import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import type { TenancyContext } from "../context.ts";
import { toInvitation } from "./serialize.ts";
import { openSession } from "./sessions.ts";
import { createUser } from "./users.ts";

/**
 * The token of an invitation's link: an HMAC of its id under the installation's key. It needs no
 * storage (an admin can copy the link again from the list), cannot be derived from the id, which
 * appears in lists and audit records, and dies with the invitation's status.
 */
export function invitationToken(ctx: TenancyContext, invitationId: string, key = ctx.config.secretKey): string {
  return createHmac("sha256", key).update(`invitation\u0000${invitationId}`).digest("base64url");
}

/** Where the invitee opens the console; the token rides in the fragment, which no server sees. */
export function acceptUrl(ctx: TenancyContext, invitationId: string, requestOrigin?: string): string {
  const base = (ctx.config.publicUrlFromRequest && requestOrigin) || ctx.config.publicUrl;
  return `${base}/invitations/${invitationId}#token=${invitationToken(ctx, invitationId)}`;
}

/** A pending invitation of the organization's list carries its link. */
export function withAcceptUrl(ctx: TenancyContext, invitation: Invitation, requestOrigin?: string): Invitation {
  return invitation.status === "pending"
    ? { ...invitation, acceptUrl: acceptUrl(ctx, invitation.id, requestOrigin) }
    : invitation;
}

/** A link made before a master key rotation still opens while the previous key is configured. */
export function tokenMatches(ctx: TenancyContext, invitationId: string, token: string): boolean {
  const presented = Buffer.from(token);
  const keys = [ctx.config.secretKey, ...(ctx.config.previousSecretKey ? [ctx.config.previousSecretKey] : [])];
  return keys.some((key) => {
    const expected = Buffer.from(invitationToken(ctx, invitationId, key));
    return expected.length === presented.length && timingSafeEqual(expected, presented);
  });
}

const notFound = (id: string) => new ProblemError("not-found", { detail: `Invitation ${id} was not found` });

/** What the link shows its holder, who is nobody known yet: the token of the link is the only proof. */
export async function previewInvitation(
  ctx: TenancyContext,
  input: { invitationId: string; token: string },
): Promise<InvitationPreview> {
  const { invitationId, token } = input;
  if (!tokenMatches(ctx, invitationId, token)) throw notFound(invitationId);
  const row = await ctx.db
    .selectFrom("invitations as i")
    .innerJoin("orgs as o", "o.id", "i.org_id")
    .selectAll("i")
    .select("o.name as org_name")
    .where("i.id", "=", invitationId)
    .executeTakeFirst();
  if (!row) throw notFound(invitationId);
  const invitation = toInvitation(row);
  return {
    id: invitation.id,
    orgName: row.org_name,
    email: invitation.email,
    role: invitation.role,
    status: invitation.status,
    expiresAt: invitation.expiresAt,
    signIn: ctx.oidc ? "oidc" : "display-name",
  };
}

/**
 * Joins the holder of the link as a new user: only without an identity provider (with one, the
 * identity that signs in accepts). The user is always a new one, so a link never opens a session
 * as someone who already exists, and the answer is the same whoever else holds the address: the
 * address was typed by an inviter, proves nothing and claims nothing. Another user holding it (one
 * who redeemed a link of their own organization for it) cannot keep the person out of this one,
 * and an admin redeeming a link of their own cannot learn from the answer whether the address is a
 * user's, nor that an identity provider once signed that user in (as it did before it was turned
 * off). The new user is not vouched for, so the address opens nothing else to it.
 */
export async function redeemInvitation(
  ctx: TenancyContext,
  input: {
    invitationId: string;
    token: string;
    displayName: string;
    userAgent?: string | undefined;
    requestId?: string | undefined;
  },
) {
  const { invitationId } = input;
  if (!tokenMatches(ctx, invitationId, input.token)) throw notFound(invitationId);
  if (ctx.oidc) {
    throw new ProblemError("conflict", {
      detail: "This installation signs people in with its identity provider: sign in there, then accept",
    });
  }
  const joined = await withDomainEvents(ctx, async (trx) => {
    const row = await trx
      .selectFrom("invitations")
      .selectAll()
      .where("id", "=", invitationId)
      .forUpdate()
      .executeTakeFirst();
    if (!row) throw notFound(invitationId);
    // Revoked, as expired, is gone for good (410); accepted or declined is an answer given (409).
    if (row.status === "revoked") throw new ProblemError("gone", { detail: "The invitation was revoked" });
    if (row.status !== "pending") {
      throw new ProblemError("conflict", { detail: `The invitation is already ${row.status}` });
    }
    if (new Date(row.expires_at).getTime() <= Date.now()) {
      throw new ProblemError("gone", { detail: "The invitation has expired" });
    }
    const user = await createUser(trx, { email: row.email, name: input.displayName });
    await trx.insertInto("org_members").values({ org_id: row.org_id, user_id: user.id, role: row.role }).execute();
    await trx
      .updateTable("invitations")
      .set({ status: "accepted", responded_at: new Date() })
      .where("id", "=", invitationId)
      .execute();
    const principal: Principal = { type: "user", id: user.id, displayName: input.displayName };
    await recordDomainEvent(ctx, trx, principal, {
      action: "invitation.accepted",
      orgId: row.org_id,
      targetType: "invitation",
      targetId: invitationId,
      details: { userId: user.id, role: row.role, via: "link" },
      requestId: input.requestId,
    });
    return { principal, acceptance: { invitationId, orgId: row.org_id, userId: user.id, role: row.role as OrgRole } };
  });
  const joiner = { principal: joined.principal, requestId: input.requestId };
  const opened = await openSession(ctx, joiner, { userAgent: input.userAgent, via: "invitation" });
  return { acceptance: joined.acceptance, ...opened };
}
