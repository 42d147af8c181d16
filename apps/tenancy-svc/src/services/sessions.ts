import { createHmac, randomBytes } from "node:crypto";
import {
  type BrowserSession,
  newId,
  type Principal,
  type ResolvedSession,
  SESSION_SECRET_PREFIX,
  SESSION_TTL_SECONDS,
} from "@agentplane/contracts";
import { recordDomainEvent, recordStandaloneEvent, withDomainEvents } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import type { Requester } from "@agentplane/service-kit";
import { type Selectable, sql } from "kysely";
import { actorOf } from "../authz/local-authorizer.ts";
import type { TenancyContext } from "../context.ts";
import { digestsEqual, sha256Hex } from "../crypto/secret-box.ts";
import type { BrowserSessionTable } from "../db/schema.ts";
import { tokenPrincipal, tokenUsable } from "./api-tokens.ts";
import { enforceUserLimit } from "./object-limits.ts";
import { iso } from "./serialize.ts";

/** `aps_<id without ses_>_<secret>`: the id finds the row, only the secret's SHA-256 is stored. */
const SECRET_PATTERN = /^aps_([0-9a-z]{26})_([A-Za-z0-9_-]{43})$/;
const LAST_USED_RESOLUTION_MS = 60_000;
const LIST_LIMIT = 100;

type SessionRow = Selectable<BrowserSessionTable>;

/**
 * The CSRF token of a session: an HMAC of its id under the installation's secret key, so it needs
 * no storage, cannot be derived from anything a page can read, and dies with the session.
 */
export function csrfTokenOf(ctx: TenancyContext, sessionId: string): string {
  return createHmac("sha256", ctx.config.secretKey).update(`csrf\u0000${sessionId}`).digest("base64url");
}

export function toBrowserSession(row: SessionRow, currentId?: string): BrowserSession {
  return {
    id: row.id,
    userId: row.user_id,
    via: row.via,
    ...(row.api_token_id ? { apiTokenId: row.api_token_id } : {}),
    ...(row.user_agent ? { userAgent: row.user_agent } : {}),
    createdAt: iso(row.created_at),
    expiresAt: iso(row.expires_at),
    ...(row.last_used_at ? { lastUsedAt: iso(row.last_used_at) } : {}),
    current: row.id === currentId,
  };
}

/**
 * The user a session would act for, the token whose restrictions it keeps and, opened from a
 * session, that session and when it ends: a session cannot outlive the one it came from (else
 * each could open the next, and no one would ever sign in again), and it ends with it when that
 * one is signed out or revoked.
 */
async function sessionSource(
  ctx: TenancyContext,
  principal: Principal,
): Promise<{
  userId: string;
  apiTokenId: string | null;
  via: SessionRow["via"];
  endsBy?: Date;
  parentId?: string;
}> {
  if (principal.sessionId) {
    const current = await ctx.db
      .selectFrom("browser_sessions")
      .selectAll()
      .where("id", "=", principal.sessionId)
      .executeTakeFirst();
    if (current) {
      const endsBy = new Date(current.expires_at);
      return {
        userId: current.user_id,
        apiTokenId: current.api_token_id,
        via: "session",
        endsBy,
        parentId: current.id,
      };
    }
  }
  if (principal.type === "api_token" && principal.userId) {
    return { userId: principal.userId, apiTokenId: principal.id, via: "api_token" };
  }
  if (principal.type === "user") return { userId: principal.id, apiTokenId: null, via: "oidc" };
  throw new ProblemError("forbidden", { detail: "Only users and their API tokens can open a browser session" });
}

/**
 * A sign-in that happens outside `/v1` (the identity provider's callback), so the gateway's
 * request record does not cover it: the session's opening is recorded as a domain event instead.
 */
export interface SignInRecord {
  method: "oidc";
  issuer: string;
  requestId?: string | undefined;
}

/**
 * Opens a session for the user behind the caller, unless they hold as many open ones as the
 * `sessions` limit allows; `via` overrides how it is recorded (invitations).
 */
export async function openSession(
  ctx: TenancyContext,
  caller: Requester,
  input: { userAgent?: string | undefined; via?: SessionRow["via"]; signIn?: SignInRecord } = {},
): Promise<{ session: BrowserSession; secret: string; csrfToken: string }> {
  const { principal } = caller;
  const source = await sessionSource(ctx, principal);
  const id = newId("browserSession");
  const secretPart = randomBytes(32).toString("base64url");
  const { signIn } = input;
  const row = await withDomainEvents(ctx, async (trx) => {
    if (source.parentId) {
      // Held until this one is recorded: a revocation of the parent that commits first is seen
      // here, one that commits after finds this session among the parent's.
      const parent = await trx
        .selectFrom("browser_sessions")
        .select("id")
        .where("id", "=", source.parentId)
        .where("revoked_at", "is", null)
        .forUpdate()
        .executeTakeFirst();
      if (!parent) throw new ProblemError("unauthenticated", { detail: "The session is not open" });
    }
    await enforceUserLimit(ctx, trx, "sessions", source.userId);
    const inserted = await trx
      .insertInto("browser_sessions")
      .values({
        id,
        user_id: source.userId,
        api_token_id: source.apiTokenId,
        via: input.via ?? source.via,
        secret_hash: sha256Hex(secretPart),
        user_agent: input.userAgent?.slice(0, 300) ?? null,
        expires_at: new Date(Math.min(Date.now() + SESSION_TTL_SECONDS * 1000, source.endsBy?.getTime() ?? Infinity)),
        last_used_at: null,
        revoked_at: null,
        parent_session_id: source.parentId ?? null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (signIn) {
      // The identity provider is the installation's, so the sign-in belongs to every organization
      // the user is a member of: one record in each one's trail (none of them names the others),
      // or one for the installation from a user in no organization yet.
      const memberships = await trx
        .selectFrom("org_members")
        .select("org_id")
        .where("user_id", "=", source.userId)
        .orderBy("org_id")
        .execute();
      const orgIds = memberships.length > 0 ? memberships.map((m) => m.org_id) : [undefined];
      for (const orgId of orgIds) {
        await recordDomainEvent(ctx, trx, principal, {
          action: "session.signed_in",
          ...(orgId ? { orgId } : {}),
          targetType: "session",
          targetId: id,
          details: { method: signIn.method, issuer: signIn.issuer, userId: source.userId },
          requestId: signIn.requestId ?? caller.requestId,
        });
      }
    }
    return inserted;
  });
  return {
    session: toBrowserSession(row, id),
    secret: `${SESSION_SECRET_PREFIX}${id.slice("ses_".length)}_${secretPart}`,
    csrfToken: csrfTokenOf(ctx, id),
  };
}

/**
 * A refused sign-in, by nobody yet known: the reason is one of the sign-in's own fixed messages
 * (never the code, the state or a token), so the record holds nothing a reader could replay.
 */
export async function recordRefusedSignIn(
  ctx: TenancyContext,
  signIn: SignInRecord & { reason: string },
): Promise<void> {
  await recordStandaloneEvent(ctx, undefined, {
    action: "session.sign_in_refused",
    targetType: "identity_provider",
    targetId: signIn.issuer,
    outcome: "denied",
    details: { method: signIn.method, issuer: signIn.issuer, reason: signIn.reason },
    requestId: signIn.requestId,
  });
}

function open(row: SessionRow): boolean {
  return !row.revoked_at && new Date(row.expires_at).getTime() > Date.now();
}

/**
 * The principal of an open session. A session opened with an unrestricted token (the owner's
 * installation token, an owner-role token bound to nothing) acts as the user; one opened with a
 * restricted token keeps the token's restrictions. Either way it ends when its token does.
 */
export async function resolveSession(ctx: TenancyContext, secret: string): Promise<ResolvedSession | undefined> {
  const match = SECRET_PATTERN.exec(secret);
  if (!match) return undefined;
  const id = `ses_${match[1]}`;
  const row = await ctx.db.selectFrom("browser_sessions").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row || !digestsEqual(row.secret_hash, sha256Hex(match[2]!)) || !open(row)) return undefined;
  let principal: Principal;
  let expiresAtMs = new Date(row.expires_at).getTime();
  if (row.api_token_id) {
    const token = await ctx.db
      .selectFrom("api_tokens")
      .selectAll()
      .where("id", "=", row.api_token_id)
      .executeTakeFirst();
    if (!token || !tokenUsable(token)) return undefined;
    if (token.expires_at) expiresAtMs = Math.min(expiresAtMs, new Date(token.expires_at).getTime());
    const restricted = token.org_id || token.project_id || token.scopes || token.role !== "owner";
    principal = restricted ? tokenPrincipal(token) : await userPrincipal(ctx, row.user_id);
  } else {
    principal = await userPrincipal(ctx, row.user_id);
  }
  const ancestors = row.parent_session_id ? await ancestorsOf(ctx, row.parent_session_id) : [];
  // A session below a revoked one is over, even one the revocation's walk did not reach (opened
  // from its parent while the walk waited for that parent's lock).
  if (ancestors.some((a) => a.revoked)) return undefined;
  const ancestorSessionIds = ancestors.map((a) => a.id);
  if (!row.last_used_at || new Date(row.last_used_at).getTime() < Date.now() - LAST_USED_RESOLUTION_MS) {
    await ctx.db.updateTable("browser_sessions").set({ last_used_at: new Date() }).where("id", "=", id).execute();
  }
  return {
    principal: { ...principal, sessionId: id },
    csrfToken: csrfTokenOf(ctx, id),
    expiresAt: new Date(expiresAtMs).toISOString(),
    ...(ancestorSessionIds.length ? { ancestorSessionIds } : {}),
  };
}

/**
 * A session's parent and the parent's own parents, nearest first, each with whether it was
 * revoked: the sessions whose revocation ends it (a parent pruned away ends the chain, as
 * `on delete set null` leaves it).
 */
async function ancestorsOf(ctx: TenancyContext, parentId: string): Promise<{ id: string; revoked: boolean }[]> {
  const rows = await ctx.db
    .withRecursive("chain(id, parent, revoked, depth)", (db) =>
      db
        .selectFrom("browser_sessions")
        .select([
          "id",
          "parent_session_id as parent",
          sql<boolean>`revoked_at is not null`.as("revoked"),
          sql<number>`0`.as("depth"),
        ])
        .where("id", "=", parentId)
        .union(
          db
            .selectFrom("browser_sessions as up")
            .innerJoin("chain", "chain.parent", "up.id")
            // A chain is at most a user's sessions long (the `sessions` limit); this only bounds the walk.
            .where("chain.depth", "<", 10_000)
            .select([
              "up.id",
              "up.parent_session_id as parent",
              sql<boolean>`up.revoked_at is not null`.as("revoked"),
              sql<number>`chain.depth + 1`.as("depth"),
            ]),
        ),
    )
    .selectFrom("chain")
    .select(["id", "revoked"])
    .orderBy("depth")
    .execute();
  return rows.map((r) => ({ id: r.id, revoked: r.revoked === true }));
}

async function userPrincipal(ctx: TenancyContext, userId: string): Promise<Principal> {
  const user = await ctx.db
    .selectFrom("users")
    .select(["display_name", "email"])
    .where("id", "=", userId)
    .executeTakeFirst();
  const displayName = user?.display_name ?? user?.email ?? undefined;
  return { type: "user", id: userId, ...(displayName ? { displayName } : {}) };
}

function userOf(principal: Principal): string {
  const actor = actorOf(principal);
  if (!actor) throw new ProblemError("forbidden", { detail: "Only users have browser sessions" });
  return actor.userId;
}

/**
 * A token bound to an organization or a project sees its user's personal things no more than
 * their personal tokens: of the user's sessions, only those opened with the token itself.
 */
function boundTokenOf(principal: Principal): string | undefined {
  const actor = actorOf(principal);
  return principal.type === "api_token" && (actor?.orgId || actor?.projectId) ? principal.id : undefined;
}

/** The session the caller's request came through. */
export async function currentSession(ctx: TenancyContext, caller: Requester): Promise<BrowserSession> {
  const { principal } = caller;
  const row = principal.sessionId
    ? await ctx.db.selectFrom("browser_sessions").selectAll().where("id", "=", principal.sessionId).executeTakeFirst()
    : undefined;
  if (!row || !open(row)) {
    throw new ProblemError("not-found", { detail: "The request did not come through a browser session" });
  }
  return toBrowserSession(row, row.id);
}

/** The caller's user's open sessions, newest first. */
export async function listSessions(ctx: TenancyContext, caller: Requester): Promise<BrowserSession[]> {
  const { principal } = caller;
  const bound = boundTokenOf(principal);
  let q = ctx.db
    .selectFrom("browser_sessions")
    .selectAll()
    .where("user_id", "=", userOf(principal))
    .where("revoked_at", "is", null)
    .where("expires_at", ">", new Date());
  if (bound) q = q.where("api_token_id", "=", bound);
  const rows = await q.orderBy("id", "desc").limit(LIST_LIMIT).execute();
  return rows.map((r) => toBrowserSession(r, principal.sessionId));
}

/**
 * Revokes one of the caller's own sessions, and with it every session opened from it, from those
 * and so on, in one transaction; another user's (or one a bound token does not see, or an unknown
 * id) answers 404.
 */
export async function revokeSession(
  ctx: TenancyContext,
  caller: Requester,
  input: { sessionId: string },
): Promise<void> {
  const { sessionId } = input;
  const bound = boundTokenOf(caller.principal);
  const userId = userOf(caller.principal);
  const now = new Date();
  await ctx.db.transaction().execute(async (trx) => {
    let q = trx
      .updateTable("browser_sessions")
      .set({ revoked_at: now })
      .where("id", "=", sessionId)
      .where("user_id", "=", userId)
      .where("revoked_at", "is", null);
    if (bound) q = q.where("api_token_id", "=", bound);
    const result = await q.executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) {
      throw new ProblemError("not-found", { detail: `No open session ${sessionId}` });
    }
    // A session opened from another has its user and token, so the walk stays within what the
    // caller could revoke one by one; it goes through sessions revoked already to those below them.
    await trx
      .withRecursive("chain(id)", (db) =>
        db
          .selectFrom("browser_sessions")
          .select("id")
          .where("parent_session_id", "=", sessionId)
          .union(
            db
              .selectFrom("browser_sessions as child")
              .innerJoin("chain", "chain.id", "child.parent_session_id")
              .select("child.id"),
          ),
      )
      .updateTable("browser_sessions")
      .set({ revoked_at: now })
      .where("id", "in", (eb) => eb.selectFrom("chain").select("chain.id"))
      .where("revoked_at", "is", null)
      .execute();
  });
}
