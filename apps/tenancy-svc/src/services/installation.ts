import { randomInt } from "node:crypto";
import { type ActivationPoll, type Installation, newId } from "@agentplane/contracts";
import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import type { Kysely } from "kysely";
import { secretKeysOf } from "../config.ts";
import type { TenancyContext } from "../context.ts";
import { digestsEqual, open, seal, sha256Hex } from "../crypto/secret-box.ts";
import type { TenancyDatabase } from "../db/schema.ts";
import { insertApiToken, insertBootstrapToken } from "./api-tokens.ts";
import type { OidcIdentity } from "./oidc-activation.ts";
import { iso } from "./serialize.ts";
import { createUser } from "./users.ts";

type Db = Kysely<TenancyDatabase>;

/** Wrong setup codes a session survives; the next one denies it. */
export const MAX_SETUP_CODE_ATTEMPTS = 5;
// RFC 8628 §6.1: consonants only, so no words and no look-alike characters.
export const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const SETUP_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

export function randomCode(alphabet: string, groups: number): string {
  const parts: string[] = [];
  for (let g = 0; g < groups; g++) {
    let part = "";
    for (let i = 0; i < 4; i++) part += alphabet[randomInt(alphabet.length)];
    parts.push(part);
  }
  return parts.join("-");
}

/** Upper case, separators dropped, regrouped by four: what the operator typed, as stored. */
export function normalizeCode(code: string): string {
  const compact = code.toUpperCase().replace(/[^A-Z0-9]/g, "");
  return compact.match(/.{1,4}/g)?.join("-") ?? "";
}

export interface InstallationStartup {
  installationId: string;
  activated: boolean;
  /** A fresh setup code when the installation is not activated yet (print it; it is stored hashed). */
  setupCode?: string;
  /** True when this start activated the installation with the bootstrap token. */
  bootstrapped: boolean;
}

/**
 * The user behind (iss, sub), inside the activation's transaction: the one the gateway may already
 * have provisioned on first sight, with its profile refreshed, or a new one linked to the identity.
 */
async function identityUser(trx: Db, identity: OidcIdentity): Promise<string> {
  const find = () =>
    trx
      .selectFrom("user_identities")
      .select("user_id")
      .where("issuer", "=", identity.issuer)
      .where("subject", "=", identity.subject)
      .executeTakeFirst();
  const existing = await find();
  if (existing) {
    const profile = {
      ...(identity.email ? { email: identity.email } : {}),
      ...(identity.name ? { display_name: identity.name } : {}),
    };
    if (Object.keys(profile).length > 0) {
      await trx.updateTable("users").set(profile).where("id", "=", existing.user_id).execute();
    }
    return existing.user_id;
  }
  const user = await createUser(trx, {
    ...(identity.email ? { email: identity.email } : {}),
    ...(identity.name ? { name: identity.name } : {}),
  });
  await trx
    .insertInto("user_identities")
    .values({ issuer: identity.issuer, subject: identity.subject, user_id: user.id })
    .execute();
  return user.id;
}

async function activate(
  trx: Db,
  input: { orgName: string; ownerName: string; email?: string | undefined; identity?: OidcIdentity | undefined },
): Promise<{ userId: string; orgId: string }> {
  const userId = input.identity
    ? await identityUser(trx, input.identity)
    : (await createUser(trx, { name: input.ownerName, ...(input.email ? { email: input.email } : {}) })).id;
  const orgId = newId("org");
  await trx.insertInto("orgs").values({ id: orgId, name: input.orgName, updated_at: new Date() }).execute();
  await trx.insertInto("org_members").values({ org_id: orgId, user_id: userId, role: "owner" }).execute();
  await trx
    .updateTable("installation")
    .set({ status: "activated", activated_at: new Date(), setup_code_hash: null })
    .where("id", "=", 1)
    .execute();
  return { userId, orgId };
}

/**
 * Runs at every start: creates the installation row, activates it with the bootstrap token when
 * configured, or else replaces the setup code (only its hash is kept, so a restart makes a new one).
 */
export async function initializeInstallation(ctx: TenancyContext): Promise<InstallationStartup> {
  const result = await ctx.db.transaction().execute(async (trx) => {
    await trx
      .insertInto("installation")
      .values({
        id: 1,
        installation_id: newId("installation"),
        status: "unactivated",
        setup_code_hash: null,
        activated_at: null,
      })
      .onConflict((oc) => oc.column("id").doNothing())
      .execute();
    const row = await trx
      .selectFrom("installation")
      .selectAll()
      .where("id", "=", 1)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (row.status === "activated") {
      return { installationId: row.installation_id, activated: true, bootstrapped: false } as InstallationStartup;
    }
    const bootstrapToken = ctx.config.bootstrapToken;
    if (bootstrapToken) {
      const { userId, orgId } = await activate(trx, { orgName: "Default", ownerName: "Owner" });
      await insertBootstrapToken(trx, userId, bootstrapToken);
      await recordDomainEvent(ctx, trx, undefined, {
        action: "installation.activated",
        orgId,
        targetType: "installation",
        targetId: row.installation_id,
        details: { method: "bootstrap_token", ownerId: userId },
      });
      return { installationId: row.installation_id, activated: true, bootstrapped: true } as InstallationStartup;
    }
    const setupCode = randomCode(SETUP_CODE_ALPHABET, 3);
    await trx
      .updateTable("installation")
      .set({ setup_code_hash: sha256Hex(setupCode) })
      .where("id", "=", 1)
      .execute();
    return { installationId: row.installation_id, activated: false, setupCode, bootstrapped: false };
  });
  return result;
}

export async function getInstallation(ctx: TenancyContext): Promise<Installation> {
  const row = await ctx.db.selectFrom("installation").selectAll().where("id", "=", 1).executeTakeFirstOrThrow();
  return {
    status: row.status,
    version: ctx.config.version,
    installationId: row.installation_id,
    ...(row.activated_at ? { activatedAt: iso(row.activated_at) } : {}),
    oidcSignIn: ctx.oidc !== undefined,
  };
}

export async function startActivation(ctx: TenancyContext, requestOrigin?: string) {
  const installation = await getInstallation(ctx);
  if (installation.status === "activated") {
    throw new ProblemError("conflict", { detail: "The installation is already activated" });
  }
  const { activationTtlSeconds: ttl, activationIntervalSeconds: interval } = ctx.config;
  const id = newId("activation");
  const userCode = randomCode(USER_CODE_ALPHABET, 2);
  await ctx.db
    .insertInto("activation_sessions")
    .values({
      id,
      user_code: userCode,
      status: "pending",
      interval_seconds: interval,
      expires_at: new Date(Date.now() + ttl * 1000),
      last_polled_at: null,
      token_enc: null,
      org_id: null,
      user_id: null,
    })
    .execute();
  const base = (ctx.config.publicUrlFromRequest && requestOrigin) || ctx.config.publicUrl;
  const verificationUri = `${base}/activate`;
  return {
    sessionId: id,
    userCode,
    verificationUri,
    verificationUriComplete: `${verificationUri}?code=${encodeURIComponent(userCode)}`,
    expiresIn: ttl,
    interval,
  };
}

export function activationTokenContext(sessionId: string): string {
  return `activation-token:${sessionId}`;
}

export async function pollActivation(ctx: TenancyContext, sessionId: string): Promise<ActivationPoll> {
  const row = await ctx.db.selectFrom("activation_sessions").selectAll().where("id", "=", sessionId).executeTakeFirst();
  if (!row) throw new ProblemError("not-found", { detail: `Activation session ${sessionId} was not found` });
  const interval = row.interval_seconds;
  if (row.status === "approved") {
    // Hand the token out once: whoever clears the column gets it.
    const sealed = await ctx.db.transaction().execute(async (trx) => {
      const locked = await trx
        .selectFrom("activation_sessions")
        .select("token_enc")
        .where("id", "=", sessionId)
        .forUpdate()
        .executeTakeFirst();
      if (!locked?.token_enc) return undefined;
      await trx.updateTable("activation_sessions").set({ token_enc: null }).where("id", "=", sessionId).execute();
      return locked.token_enc;
    });
    const token = sealed
      ? open(secretKeysOf(ctx.config), sealed, activationTokenContext(sessionId)).toString("utf8")
      : undefined;
    return {
      status: "approved",
      interval,
      ...(row.org_id ? { orgId: row.org_id } : {}),
      ...(row.user_id ? { userId: row.user_id } : {}),
      ...(token ? { token } : {}),
    };
  }
  if (row.status === "denied") return { status: "denied", interval };
  const now = Date.now();
  const expiresAt = new Date(row.expires_at).getTime();
  if (expiresAt <= now) return { status: "expired", interval };
  const installation = await getInstallation(ctx);
  // Activated through another session or the bootstrap token: this one can no longer be approved.
  if (installation.status === "activated") return { status: "denied", interval };
  const accepted = await ctx.db
    .updateTable("activation_sessions")
    .set({ last_polled_at: new Date(now) })
    .where("id", "=", sessionId)
    .where((eb) =>
      eb.or([eb("last_polled_at", "is", null), eb("last_polled_at", "<=", new Date(now - interval * 1000))]),
    )
    .returning("id")
    .executeTakeFirst();
  if (!accepted) return { status: "slow_down", interval };
  return { status: "pending", interval, expiresIn: Math.max(0, Math.floor((expiresAt - now) / 1000)) };
}

export type ApprovalOutcome =
  | { outcome: "approved"; orgId: string }
  | { outcome: "wrong_setup_code"; attemptsLeft: number }
  | { outcome: "denied" }
  | { outcome: "unknown_code" }
  | { outcome: "expired" }
  | { outcome: "already_activated" };

export interface ApprovalInput {
  userCode: string;
  orgName?: string | undefined;
  ownerName?: string | undefined;
  email?: string | undefined;
}

/**
 * How the operator proves they may activate: always the setup code printed at first start (only
 * whoever runs the platform has it). A sign-in at the configured identity provider, whose ID token
 * the caller has already verified, names who the first owner is; it proves nothing about the right
 * to activate, since anyone with an account at the provider can sign in.
 */
export interface Approver {
  setupCode: string;
  identity?: OidcIdentity | undefined;
}

/** The installation row and the session of a user code, both locked for the approval's transaction. */
async function lockForApproval(trx: Db, sessionId: string) {
  const installation = await trx
    .selectFrom("installation")
    .selectAll()
    .where("id", "=", 1)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const locked = await trx
    .selectFrom("activation_sessions")
    .selectAll()
    .where("id", "=", sessionId)
    .forUpdate()
    .executeTakeFirstOrThrow();
  return { installation, locked };
}

/**
 * Whether the session can be approved with this setup code, checked under `lockForApproval`'s
 * locks: the outcome that refuses it, or undefined. A wrong code counts against the session, which
 * is denied after `MAX_SETUP_CODE_ATTEMPTS`.
 */
async function refusal(
  trx: Db,
  { installation, locked }: Awaited<ReturnType<typeof lockForApproval>>,
  setupCode: string,
): Promise<ApprovalOutcome | undefined> {
  if (installation.status === "activated") return { outcome: "already_activated" };
  if (locked.status === "denied") return { outcome: "denied" };
  if (locked.status !== "pending") return { outcome: "already_activated" };
  if (new Date(locked.expires_at).getTime() <= Date.now()) return { outcome: "expired" };
  const presented = sha256Hex(normalizeCode(setupCode));
  if (installation.setup_code_hash && digestsEqual(installation.setup_code_hash, presented)) return undefined;
  const attempts = locked.failed_attempts + 1;
  const denied = attempts >= MAX_SETUP_CODE_ATTEMPTS;
  await trx
    .updateTable("activation_sessions")
    .set({ failed_attempts: attempts, ...(denied ? { status: "denied" as const } : {}) })
    .where("id", "=", locked.id)
    .execute();
  return denied
    ? { outcome: "denied" }
    : { outcome: "wrong_setup_code", attemptsLeft: MAX_SETUP_CODE_ATTEMPTS - attempts };
}

/** The newest session of a user code, if any. */
function sessionOf(ctx: TenancyContext, userCode: string) {
  return ctx.db
    .selectFrom("activation_sessions")
    .select(["id"])
    .where("user_code", "=", normalizeCode(userCode))
    .orderBy("created_at", "desc")
    .executeTakeFirst();
}

/** The verification page's approval: checks the approver and, when accepted, activates the installation. */
export async function approveActivation(
  ctx: TenancyContext,
  input: ApprovalInput & Approver,
): Promise<ApprovalOutcome> {
  const session = await sessionOf(ctx, input.userCode);
  if (!session) return { outcome: "unknown_code" };
  const identity = input.identity;
  return withDomainEvents(ctx, async (trx): Promise<ApprovalOutcome> => {
    const rows = await lockForApproval(trx, session.id);
    const refused = await refusal(trx, rows, input.setupCode);
    if (refused) return refused;
    const { installation, locked } = rows;
    const { userId, orgId } = await activate(trx, {
      orgName: input.orgName?.trim() || "Default",
      ownerName: input.ownerName?.trim() || "Owner",
      email: input.email?.trim() || undefined,
      identity,
    });
    // Not bound to the first org, so the owner can go on to create and use further organizations.
    const { token } = await insertApiToken(trx, { orgId: null, userId, name: "Installation owner", role: "owner" });
    await trx
      .updateTable("activation_sessions")
      .set({
        status: "approved",
        token_enc: seal(ctx.config.secretKey, token, activationTokenContext(locked.id)),
        org_id: orgId,
        user_id: userId,
      })
      .where("id", "=", locked.id)
      .execute();
    await recordDomainEvent(ctx, trx, undefined, {
      action: "installation.activated",
      orgId,
      targetType: "installation",
      targetId: installation.installation_id,
      details: {
        method: "device_flow",
        approval: identity ? "oidc_sign_in" : "setup_code",
        sessionId: locked.id,
        ownerId: userId,
        ...(identity ? { issuer: identity.issuer } : {}),
      },
    });
    return { outcome: "approved", orgId };
  });
}

/**
 * Whether a session with this user code can be approved with this setup code, checked before the
 * operator is sent to the identity provider (a wrong code counts, as in the approval): the outcome
 * that refuses it, or undefined. The approval itself checks again under its locks.
 */
export async function checkActivationCodes(
  ctx: TenancyContext,
  userCode: string,
  setupCode: string,
): Promise<ApprovalOutcome | undefined> {
  const session = await sessionOf(ctx, userCode);
  if (!session) return { outcome: "unknown_code" };
  return ctx.db.transaction().execute(async (trx) => refusal(trx, await lockForApproval(trx, session.id), setupCode));
}
