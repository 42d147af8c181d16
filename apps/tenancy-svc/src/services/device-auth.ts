import { randomBytes } from "node:crypto";
import {
  DEVICE_TOKEN_TTL_SECONDS,
  type DeviceAuthorization,
  type DevicePollError,
  type DeviceToken,
  minOrgRole,
  newId,
  OAUTH_ERROR_HEADER,
  ORG_ROLES,
  type OrgRole,
  type Principal,
} from "@agentplane/contracts";
import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import type { Requester } from "@agentplane/service-kit";
import type { Kysely, Selectable } from "kysely";
import { actorOf } from "../authz/local-authorizer.ts";
import { secretKeysOf } from "../config.ts";
import type { TenancyContext } from "../context.ts";
import { open, seal, sha256Hex } from "../crypto/secret-box.ts";
import type { DeviceAuthorizationTable, TenancyDatabase } from "../db/schema.ts";
import { credentialExpiry, insertApiToken, memberRole } from "./api-tokens.ts";
import { getInstallation, normalizeCode, randomCode, USER_CODE_ALPHABET } from "./installation.ts";
import { enforceOrgLimit, enforceUserLimit } from "./object-limits.ts";

type Db = Kysely<TenancyDatabase>;
type Row = Selectable<DeviceAuthorizationTable>;

/** RFC 8628 §3.5: each `slow_down` adds five seconds to the interval, for the rest of the flow. */
export const SLOW_DOWN_STEP_SECONDS = 5;
const DEFAULT_CLIENT_NAME = "a device";

export const deviceTokenContext = (id: string) => `device-token:${id}`;

/**
 * A poll's refusal: 400 with RFC 8628's code in `error` (RFC 6749 §5.2), as a problem. The code is
 * also in a header for the gateway, which leaves the polls before the decision out of the audit
 * trail but records the others.
 */
function pollError(error: DevicePollError | "invalid_grant", detail: string, interval?: number): ProblemError {
  return new ProblemError("bad-request", {
    detail,
    headers: { [OAUTH_ERROR_HEADER]: error },
    extensions: { error, error_description: detail, ...(interval ? { interval } : {}) },
  });
}

export async function startDeviceAuthorization(
  ctx: TenancyContext,
  input: { clientName?: string | undefined; requestOrigin?: string | undefined },
): Promise<DeviceAuthorization> {
  if ((await getInstallation(ctx)).status !== "activated") {
    throw new ProblemError("conflict", {
      detail: "The installation is not activated yet: activate it first (POST /v1/installation/activation)",
    });
  }
  const { activationTtlSeconds: ttl, activationIntervalSeconds: interval } = ctx.config;
  const deviceCode = randomBytes(32).toString("base64url");
  const userCode = randomCode(USER_CODE_ALPHABET, 2);
  await ctx.db
    .insertInto("device_authorizations")
    .values({
      id: newId("deviceAuthorization"),
      device_code_hash: sha256Hex(deviceCode),
      user_code_hash: sha256Hex(userCode),
      client_name: input.clientName ?? DEFAULT_CLIENT_NAME,
      status: "pending",
      interval_seconds: interval,
      expires_at: new Date(Date.now() + ttl * 1000),
      last_polled_at: null,
      user_id: null,
      token_id: null,
      token_enc: null,
      decided_at: null,
    })
    .execute();
  const base = (ctx.config.publicUrlFromRequest && input.requestOrigin) || ctx.config.publicUrl;
  const verificationUri = `${base}/device`;
  return {
    deviceCode,
    userCode,
    verificationUri,
    verificationUriComplete: `${verificationUri}?code=${encodeURIComponent(userCode)}`,
    expiresIn: ttl,
    interval,
  };
}

const expired = (row: Pick<Row, "expires_at">) => new Date(row.expires_at).getTime() <= Date.now();

/**
 * One poll. Throws the RFC 8628 error while there is no token to give; once approved, returns the
 * token to whoever polls first (the sealed copy is cleared in the same statement).
 */
export async function pollDeviceAuthorization(ctx: TenancyContext, deviceCode: string): Promise<DeviceToken> {
  const row = await ctx.db
    .selectFrom("device_authorizations")
    .selectAll()
    .where("device_code_hash", "=", sha256Hex(deviceCode))
    .executeTakeFirst();
  if (!row) throw pollError("invalid_grant", "No device authorization has this device code");
  if (row.status === "approved" && expired(row)) {
    // Approved, but not collected within the code's life: the session is over (RFC 8628 3.5).
    // The token minted for it was never handed to anyone; it is revoked, its sealed copy dropped.
    await ctx.db.transaction().execute(async (trx) => {
      const locked = await trx
        .selectFrom("device_authorizations")
        .select("token_id")
        .where("id", "=", row.id)
        .where("status", "=", "approved")
        .forUpdate()
        .executeTakeFirst();
      if (!locked) return;
      await trx.updateTable("device_authorizations").set({ token_enc: null }).where("id", "=", row.id).execute();
      if (locked.token_id) {
        await trx
          .updateTable("api_tokens")
          .set({ revoked_at: new Date() })
          .where("id", "=", locked.token_id)
          .where("revoked_at", "is", null)
          .execute();
      }
    });
    throw pollError("expired_token", "The device code expired before its token was collected: start a new sign-in");
  }
  if (row.status === "approved") {
    // Whoever clears the sealed copy gets the token (RETURNING would show the cleared value).
    const handed = await ctx.db.transaction().execute(async (trx) => {
      const locked = await trx
        .selectFrom("device_authorizations")
        .select(["token_enc", "token_id"])
        .where("id", "=", row.id)
        .where("status", "=", "approved")
        .forUpdate()
        .executeTakeFirst();
      if (!locked) return undefined;
      await trx
        .updateTable("device_authorizations")
        .set({ status: "consumed", token_enc: null })
        .where("id", "=", row.id)
        .execute();
      return locked;
    });
    if (handed?.token_enc && handed.token_id) {
      const token = open(secretKeysOf(ctx.config), handed.token_enc, deviceTokenContext(row.id)).toString("utf8");
      const tokenRow = await ctx.db
        .selectFrom("api_tokens")
        .select("expires_at")
        .where("id", "=", handed.token_id)
        .executeTakeFirstOrThrow();
      return {
        token,
        tokenId: handed.token_id,
        tokenType: "Bearer",
        expiresAt: new Date(tokenRow.expires_at ?? Date.now()).toISOString(),
      };
    }
  }
  if (row.status === "approved" || row.status === "consumed") {
    throw pollError("invalid_grant", "The token of this device authorization was already handed out");
  }
  if (row.status === "denied") throw pollError("access_denied", "The sign-in was denied");
  if (expired(row)) throw pollError("expired_token", "The device code expired: start a new sign-in");
  // Rate limit per device code: a poll sooner than the interval after the last one slows the flow down.
  const now = Date.now();
  const interval = row.interval_seconds;
  const onTime = await ctx.db
    .updateTable("device_authorizations")
    .set({ last_polled_at: new Date(now) })
    .where("id", "=", row.id)
    .where((eb) =>
      eb.or([
        eb("last_polled_at", "is", null),
        // A little slack for timers that fire early and for the network.
        eb("last_polled_at", "<=", new Date(now - interval * 1000 + 250)),
      ]),
    )
    .returning("id")
    .executeTakeFirst();
  if (!onTime) {
    const slower = interval + SLOW_DOWN_STEP_SECONDS;
    await ctx.db
      .updateTable("device_authorizations")
      .set({ interval_seconds: slower, last_polled_at: new Date(now) })
      .where("id", "=", row.id)
      .execute();
    throw pollError("slow_down", `Polled sooner than the interval: wait ${slower} s between polls`, slower);
  }
  throw pollError("authorization_pending", "The sign-in has not been approved yet", interval);
}

/** What the approval page shows about a user code, or why it cannot be decided. */
export type DeviceLookup =
  | { state: "pending"; id: string; clientName: string; expiresAt: Date }
  | { state: "unknown" | "expired" | "decided" };

export async function lookUpUserCode(db: Db, userCode: string): Promise<DeviceLookup> {
  const normalized = normalizeCode(userCode);
  if (!normalized) return { state: "unknown" };
  const row = await db
    .selectFrom("device_authorizations")
    .select(["id", "client_name", "status", "expires_at"])
    .where("user_code_hash", "=", sha256Hex(normalized))
    .orderBy("created_at", "desc")
    .executeTakeFirst();
  if (!row) return { state: "unknown" };
  if (row.status !== "pending") return { state: "decided" };
  if (expired(row)) return { state: "expired" };
  return { state: "pending", id: row.id, clientName: row.client_name, expiresAt: new Date(row.expires_at) };
}

const RANK = (role: OrgRole) => ORG_ROLES.length - ORG_ROLES.indexOf(role);

/**
 * The token a device flow mints for the approving principal: the same user, never more than the
 * approver could do. A token bound to an organization (or project, or scopes) passes its binding on;
 * otherwise the token is bound to nothing and capped at the user's highest role, so it acts in each
 * organization with the user's role there.
 */
async function tokenFor(db: Db, approver: Principal): Promise<Parameters<typeof insertApiToken>[1]> {
  const actor = actorOf(approver);
  if (!actor) throw new ProblemError("forbidden", { detail: "Only a person can approve a sign-in" });
  let role: OrgRole | undefined;
  if (actor.orgId) {
    role = await memberRole(db, actor.orgId, actor.userId);
  } else {
    const roles = await db.selectFrom("org_members").select("role").where("user_id", "=", actor.userId).execute();
    for (const r of roles) if (!role || RANK(r.role as OrgRole) > RANK(role)) role = r.role as OrgRole;
  }
  if (!role) throw new ProblemError("forbidden", { detail: "The approving user is not a member of any organization" });
  // Approved with an expiring token (pasted, or behind the session): the sign-in ends with it.
  const ceiling = await credentialExpiry(db, approver);
  return {
    orgId: actor.orgId ?? null,
    userId: actor.userId,
    name: "",
    role: actor.cap ? minOrgRole(actor.cap, role) : role,
    projectId: actor.projectId ?? null,
    scopes: approver.scopes ?? null,
    expiresAt: new Date(Math.min(Date.now() + DEVICE_TOKEN_TTL_SECONDS * 1000, ceiling?.getTime() ?? Infinity)),
  };
}

export type DecisionOutcome =
  | { outcome: "approved"; clientName: string; role: OrgRole }
  | { outcome: "denied"; clientName: string }
  | { outcome: "unknown" | "expired" | "decided" };

/**
 * The approval page's decision, by the signed-in person (the caller: who the page's session or the
 * pasted token names; there is no organization to authorize in); approving mints their token (audited).
 */
export async function decideDeviceAuthorization(
  ctx: TenancyContext,
  caller: Requester,
  input: { userCode: string; approve: boolean },
): Promise<DecisionOutcome> {
  const approver = caller.principal;
  const found = await lookUpUserCode(ctx.db, input.userCode);
  if (found.state !== "pending") return { outcome: found.state };
  return withDomainEvents(ctx, async (trx): Promise<DecisionOutcome> => {
    const row = await trx
      .selectFrom("device_authorizations")
      .selectAll()
      .where("id", "=", found.id)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (row.status !== "pending") return { outcome: "decided" };
    if (expired(row)) return { outcome: "expired" };
    const userId = actorOf(approver)?.userId ?? null;
    if (!input.approve) {
      await trx
        .updateTable("device_authorizations")
        .set({ status: "denied", user_id: userId, decided_at: new Date() })
        .where("id", "=", row.id)
        .execute();
      return { outcome: "denied", clientName: row.client_name };
    }
    const spec = await tokenFor(trx, approver);
    // The minted token counts like any other: in its organization, or among its user's personal ones.
    if (spec.orgId) await enforceOrgLimit(ctx, trx, "api-tokens", spec.orgId);
    else await enforceUserLimit(ctx, trx, "personal-api-tokens", spec.userId);
    const { row: created, token } = await insertApiToken(trx, { ...spec, name: row.client_name });
    await trx
      .updateTable("device_authorizations")
      .set({
        status: "approved",
        user_id: spec.userId,
        token_id: created.id,
        token_enc: seal(ctx.config.secretKey, token, deviceTokenContext(row.id)),
        decided_at: new Date(),
      })
      .where("id", "=", row.id)
      .execute();
    // Recorded as any token creation, with how it came about.
    await recordDomainEvent(ctx, trx, approver, {
      action: "api_token.created",
      orgId: created.orgId,
      projectId: created.projectId,
      targetType: "api_token",
      targetId: created.id,
      details: {
        role: spec.role,
        name: row.client_name,
        via: "device_authorization",
        deviceAuthorizationId: row.id,
        ...(spec.scopes ? { scopes: spec.scopes } : {}),
      },
      requestId: caller.requestId,
    });
    return { outcome: "approved", clientName: row.client_name, role: spec.role };
  });
}
