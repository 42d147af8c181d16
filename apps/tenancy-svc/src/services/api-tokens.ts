import { randomBytes } from "node:crypto";
import { type ApiToken, newId, ORG_ROLES, type OrgRole, orgRoleAtLeast, type Principal } from "@agentplane/contracts";
import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import type { Caller, Requester } from "@agentplane/service-kit";
import { type Kysely, type Selectable, sql } from "kysely";
import { actorOf } from "../authz/local-authorizer.ts";
import type { TenancyContext } from "../context.ts";
import { digestsEqual, sha256Hex } from "../crypto/secret-box.ts";
import type { ApiTokenTable, TenancyDatabase } from "../db/schema.ts";
import { orgRoleOf } from "./caller.ts";
import { enforceOrgLimit } from "./object-limits.ts";
import { page, scopesOf, toApiToken } from "./serialize.ts";
import { shareMembership } from "./share-locks.ts";

type Db = Kysely<TenancyDatabase>;

/**
 * Token format: `apl_<id>_<secret>`, where `<id>` is the token id without its `tok_` prefix (26
 * base32 characters) and `<secret>` 32 random bytes in base64url. The id finds the row; only the
 * SHA-256 of the secret is stored and compared in constant time.
 */
const TOKEN_PATTERN = /^apl_([0-9a-z]{26})_([A-Za-z0-9_-]{43})$/;
const LAST_USED_RESOLUTION_SECONDS = 60;
/** JavaScript writes a year past 9999 as +010000, which Postgres reads as a bad offset. */
const AFTER_LATEST_EXPIRY_MS = Date.parse("+010000-01-01T00:00:00Z");

export function mintTokenSecret(id: string): { token: string; secretHash: string; prefix: string } {
  const secret = randomBytes(32).toString("base64url");
  const token = `apl_${id.slice("tok_".length)}_${secret}`;
  return { token, secretHash: sha256Hex(secret), prefix: token.slice(0, 12) };
}

export interface NewTokenInput {
  orgId: string | null;
  userId: string;
  name: string;
  role: OrgRole;
  projectId?: string | null;
  scopes?: readonly string[] | null;
  expiresAt?: Date | null;
}

export async function insertApiToken(db: Db, input: NewTokenInput): Promise<{ row: ApiToken; token: string }> {
  const id = newId("apiToken");
  const { token, secretHash, prefix } = mintTokenSecret(id);
  const row = await db
    .insertInto("api_tokens")
    .values({
      id,
      org_id: input.orgId,
      user_id: input.userId,
      name: input.name,
      role: input.role,
      project_id: input.projectId ?? null,
      scopes: input.scopes ? JSON.stringify(input.scopes) : null,
      secret_hash: secretHash,
      kind: "apl",
      prefix,
      expires_at: input.expiresAt ?? null,
      last_used_at: null,
      revoked_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row: toApiToken(row), token };
}

/** Registers AGENTPLANE_BOOTSTRAP_TOKEN verbatim (as its hash) as an owner token of the user. */
export async function insertBootstrapToken(db: Db, userId: string, token: string): Promise<void> {
  await db
    .insertInto("api_tokens")
    .values({
      id: newId("apiToken"),
      org_id: null,
      user_id: userId,
      name: "Bootstrap token",
      role: "owner",
      project_id: null,
      secret_hash: sha256Hex(token),
      kind: "bootstrap",
      prefix: "bootstrap",
      expires_at: null,
      last_used_at: null,
      revoked_at: null,
    })
    .execute();
}

/** The principal of an opaque API token, or undefined when unknown, revoked or expired. */
export async function resolveApiToken(db: Db, token: string): Promise<Principal | undefined> {
  return (await resolveApiTokenWithExpiry(db, token))?.principal;
}

/** The principal of an opaque API token with its expiry, or undefined when unknown, revoked or expired. */
export async function resolveApiTokenWithExpiry(
  db: Db,
  token: string,
): Promise<{ principal: Principal; expiresAt: Date | null } | undefined> {
  const match = TOKEN_PATTERN.exec(token);
  let row = match
    ? await db
        .selectFrom("api_tokens")
        .selectAll()
        .where("id", "=", `tok_${match[1]}`)
        .where("kind", "=", "apl")
        .executeTakeFirst()
    : undefined;
  let presentedHash: string;
  if (row && match) {
    presentedHash = sha256Hex(match[2]!);
  } else {
    // Not our format (or not ours at all): the only other kind is the bootstrap token, found by its hash.
    if (token.length < 32) return undefined;
    presentedHash = sha256Hex(token);
    row = await db
      .selectFrom("api_tokens")
      .selectAll()
      .where("kind", "=", "bootstrap")
      .where("secret_hash", "=", presentedHash)
      .executeTakeFirst();
  }
  if (!row || !digestsEqual(row.secret_hash, presentedHash)) return undefined;
  if (!tokenUsable(row)) return undefined;
  await db
    .updateTable("api_tokens")
    .set({ last_used_at: new Date() })
    .where("id", "=", row.id)
    .where((eb) =>
      eb.or([
        eb("last_used_at", "is", null),
        eb("last_used_at", "<", new Date(Date.now() - LAST_USED_RESOLUTION_SECONDS * 1000)),
      ]),
    )
    .execute();
  return { principal: tokenPrincipal(row), expiresAt: row.expires_at ? new Date(row.expires_at) : null };
}

/** Neither revoked nor expired. */
export function tokenUsable(row: Pick<Selectable<ApiTokenTable>, "revoked_at" | "expires_at">): boolean {
  if (row.revoked_at) return false;
  return !row.expires_at || new Date(row.expires_at).getTime() > Date.now();
}

/** The principal a token row acts as: its creator, within the token's restrictions. */
export function tokenPrincipal(row: Selectable<ApiTokenTable>): Principal {
  return {
    type: "api_token",
    id: row.id,
    displayName: row.name,
    userId: row.user_id,
    role: row.role,
    ...(row.org_id ? { orgId: row.org_id } : {}),
    ...(row.project_id ? { projectId: row.project_id } : {}),
    ...(row.scopes ? { scopes: scopesOf(row.scopes) } : {}),
  };
}

/**
 * When the credential a request came with stops working: its token's expiry, or, for a browser
 * session opened with a token, that token's (the session ends with it). Null when it does not
 * expire: a person's own sign-in, a token without expiry. What it mints must not outlive it.
 */
export async function credentialExpiry(db: Db, principal: Principal): Promise<Date | null> {
  let tokenId: string | null | undefined;
  if (principal.type === "api_token") tokenId = principal.id;
  else if (principal.sessionId) {
    const session = await db
      .selectFrom("browser_sessions")
      .select("api_token_id")
      .where("id", "=", principal.sessionId)
      .executeTakeFirst();
    tokenId = session?.api_token_id;
  }
  if (!tokenId) return null;
  const row = await db.selectFrom("api_tokens").select("expires_at").where("id", "=", tokenId).executeTakeFirst();
  return row?.expires_at ? new Date(row.expires_at) : null;
}

/** The user who acts, directly or through one of their tokens (a token of the caller's own user). */
function userIdOf(caller: Requester): string {
  const actor = actorOf(caller.principal);
  if (!actor) throw new ProblemError("forbidden", { detail: "Only users and their API tokens have API tokens" });
  return actor.userId;
}

/** A new token of the caller's user in the caller's org, never above what the caller may do. */
export async function createApiToken(
  ctx: TenancyContext,
  caller: Caller,
  input: {
    name: string;
    role?: OrgRole | undefined;
    projectId?: string | undefined;
    scopes?: readonly string[] | undefined;
    expiresAt?: string | undefined;
  },
): Promise<ApiToken & { token: string }> {
  const { principal, orgId } = caller;
  const userId = userIdOf(caller);
  // The creator's role is already the lower of its token's role and its user's role.
  const creatorRole = orgRoleOf(caller);
  const role = input.role ?? creatorRole;
  if (!orgRoleAtLeast(creatorRole, role)) {
    throw new ProblemError("forbidden", {
      detail: `A token's role cannot be above its creator's role (${creatorRole})`,
    });
  }
  // A project-restricted creator can only mint tokens restricted to the same project.
  const projectId = input.projectId ?? (principal.type === "api_token" ? principal.projectId : undefined);
  if (principal.type === "api_token" && principal.projectId && projectId !== principal.projectId) {
    throw new ProblemError("forbidden", { detail: "This token may only create tokens for its own project" });
  }
  if (projectId) {
    const project = await ctx.db
      .selectFrom("projects")
      .select("id")
      .where("id", "=", projectId)
      .where("org_id", "=", orgId)
      .executeTakeFirst();
    if (!project) {
      throw new ProblemError("validation-failed", {
        detail: "The request is not valid",
        errors: [{ pointer: "/body/projectId", message: "No such project in this organization" }],
      });
    }
  }
  // A scoped creator passes on at most its own scopes (a token never mints a wider one).
  const scopes = input.scopes ?? (principal.type === "api_token" ? principal.scopes : undefined);
  if (principal.type === "api_token" && principal.scopes) {
    const allowed = new Set(principal.scopes);
    if (!scopes || scopes.some((s) => !allowed.has(s))) {
      throw new ProblemError("forbidden", { detail: "This token may only create tokens within its own scopes" });
    }
  }
  let expiresAt: Date | null = null;
  if (input.expiresAt) {
    expiresAt = new Date(input.expiresAt);
    if (expiresAt.getTime() <= Date.now()) {
      throw new ProblemError("validation-failed", {
        detail: "The request is not valid",
        errors: [{ pointer: "/body/expiresAt", message: "Must be in the future" }],
      });
    }
    // An offset can move 9999-12-31 into the year 10000, which the database cannot be sent.
    if (expiresAt.getTime() >= AFTER_LATEST_EXPIRY_MS) {
      throw new ProblemError("validation-failed", {
        detail: "The request is not valid",
        errors: [{ pointer: "/body/expiresAt", message: "Must be before 10000-01-01T00:00:00Z" }],
      });
    }
  }
  // A token made with an expiring token expires with it at the latest (by default, with it).
  const ceiling = await credentialExpiry(ctx.db, principal);
  if (ceiling && !expiresAt) expiresAt = ceiling;
  else if (ceiling && expiresAt && expiresAt.getTime() > ceiling.getTime()) {
    throw new ProblemError("forbidden", {
      detail: `A token cannot outlive the token it is made with, which expires at ${ceiling.toISOString()}`,
    });
  }
  const { row, token } = await withDomainEvents(ctx, async (trx) => {
    // The membership stays locked until the token is stored: a removal from the organization, which
    // revokes the member's tokens there, waits for it (and revokes it) or has already happened.
    await shareMembership(trx, orgId, userId, `Organization ${orgId} was not found`);
    await enforceOrgLimit(ctx, trx, "api-tokens", orgId);
    const created = await insertApiToken(trx, {
      orgId,
      userId,
      name: input.name,
      role,
      projectId: projectId ?? null,
      scopes: scopes ? [...new Set(scopes)] : null,
      expiresAt,
    });
    await recordDomainEvent(ctx, trx, principal, {
      action: "api_token.created",
      orgId,
      projectId,
      targetType: "api_token",
      targetId: created.row.id,
      details: { role, name: input.name, ...(scopes ? { scopes: [...new Set(scopes)] } : {}) },
      requestId: caller.requestId,
    });
    return created;
  });
  return { ...row, token };
}

/**
 * Revokes a token the caller may change (`visibleToken` decided that, with the caller: the one
 * `authorize` returned, or the requester for the installation owner token, which has no org).
 */
export async function revokeApiToken(
  ctx: TenancyContext,
  caller: Requester,
  input: { tokenId: string },
): Promise<void> {
  const { tokenId } = input;
  await withDomainEvents(ctx, async (trx) => {
    const revoked = await trx
      .updateTable("api_tokens")
      .set({ revoked_at: sql<Date>`now()` })
      .where("id", "=", tokenId)
      .where("revoked_at", "is", null)
      .returning(["id", "org_id"])
      .executeTakeFirst();
    // Revoking an already revoked token changes nothing, so it records nothing either.
    if (!revoked) return;
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "api_token.revoked",
      orgId: revoked.org_id ?? undefined,
      targetType: "api_token",
      targetId: tokenId,
      requestId: caller.requestId,
    });
  });
}

/**
 * The org's tokens the caller may see: admins see every one; others only their user's, ranked at
 * most their own role (a member-role token of an owner does not list the owner's higher tokens).
 */
export async function listApiTokens(
  ctx: TenancyContext,
  caller: Caller,
  query: { limit: number; cursor?: string | undefined },
): Promise<{ items: ApiToken[]; nextCursor?: string }> {
  const { orgId } = caller;
  const callerRole = orgRoleOf(caller);
  const own = callerRole !== "owner" && callerRole !== "admin";
  const userId = userIdOf(caller);
  // A token capped below its user's role: every token of the user ranks at least that cap.
  const capped = own && !orgRoleAtLeast(callerRole, (await memberRole(ctx.db, orgId, userId)) ?? "viewer");
  const rows = await listApiTokenRows(ctx.db, orgId, {
    limit: query.limit,
    cursor: query.cursor,
    ...(own ? { userId } : {}),
    ...(capped ? { roles: ORG_ROLES.filter((role) => orgRoleAtLeast(callerRole, role)) } : {}),
  });
  const result = page(rows, query.limit);
  return { items: result.items.map(toApiToken), ...(result.nextCursor ? { nextCursor: result.nextCursor } : {}) };
}

export function getApiTokenRow(db: Db, tokenId: string) {
  return db.selectFrom("api_tokens").selectAll().where("id", "=", tokenId).executeTakeFirst();
}

/**
 * One page of an org's tokens (ordered by id, `limit + 1` rows so the caller knows if more follow);
 * `userId` keeps one user's, `roles` those of these roles.
 */
export function listApiTokenRows(
  db: Db,
  orgId: string,
  options: { limit: number; cursor?: string | undefined; userId?: string | undefined; roles?: readonly OrgRole[] },
) {
  let q = db
    .selectFrom("api_tokens")
    .selectAll()
    .where("org_id", "=", orgId)
    .orderBy("id")
    .limit(options.limit + 1);
  if (options.userId) q = q.where("user_id", "=", options.userId);
  if (options.roles) q = q.where("role", "in", options.roles);
  if (options.cursor) q = q.where("id", ">", options.cursor);
  return q.execute();
}

/** The role a user holds in an org now, if still a member. */
export async function memberRole(db: Db, orgId: string, userId: string): Promise<OrgRole | undefined> {
  const row = await db
    .selectFrom("org_members")
    .select("role")
    .where("org_id", "=", orgId)
    .where("user_id", "=", userId)
    .executeTakeFirst();
  return row?.role as OrgRole | undefined;
}
