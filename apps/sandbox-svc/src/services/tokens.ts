import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { newId, type Principal, SANDBOX_TOKEN_PREFIX } from "@agentplane/contracts";
import { withDomainEvents } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import type { Caller } from "@agentplane/service-kit";
import type { Kysely, Selectable } from "kysely";
import type { SandboxDB, SandboxTokenTable } from "../db/schema.ts";
import { recordSandboxEvent, type SandboxDeps } from "./context.ts";
import type { SandboxRow } from "./mapping.ts";

export type TokenRow = Selectable<SandboxTokenTable>;

const TOKEN_SHAPE = new RegExp(`^${SANDBOX_TOKEN_PREFIX}([0-9a-z]{26})_([0-9a-f]{64})$`);
const PLATFORM_TOKEN_NAME = "platform";

function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** A token and the row that records it (its secret only as a hash), not written yet. */
export interface NewToken {
  row: TokenRow;
  token: string;
}

type TokenOwner = Pick<SandboxRow, "id" | "project_id" | "org_id">;

function newToken(sandbox: TokenOwner, name: string, createdBy: string, expiresAt: Date | null): NewToken {
  const id = newId("sandboxToken");
  const secret = randomBytes(32).toString("hex");
  const row = {
    id,
    project_id: sandbox.project_id,
    org_id: sandbox.org_id,
    sandbox_id: sandbox.id,
    name,
    secret_hash: hashSecret(secret),
    created_by: createdBy,
    created_at: new Date(),
    expires_at: expiresAt,
    last_used_at: null,
    revoked_at: null,
  };
  return { row, token: `${SANDBOX_TOKEN_PREFIX}${id.slice(id.indexOf("_") + 1)}_${secret}` };
}

async function insertToken(
  db: Kysely<SandboxDB>,
  sandbox: TokenOwner,
  name: string,
  createdBy: string,
  expiresAt: Date | null,
): Promise<NewToken> {
  const created = newToken(sandbox, name, createdBy, expiresAt);
  await db.insertInto("sandbox_tokens").values(created.row).execute();
  return created;
}

export async function createSandboxToken(
  deps: SandboxDeps,
  caller: Caller,
  { sandbox, ...input }: { sandbox: SandboxRow; name: string; expiresIn?: number | undefined },
) {
  const expiresAt = input.expiresIn ? new Date(Date.now() + input.expiresIn * 1000) : null;
  return withDomainEvents(deps, async (trx) => {
    const created = await insertToken(trx, sandbox, input.name, caller.principal.id, expiresAt);
    await recordSandboxEvent(deps, trx, caller, {
      action: "sandbox_token.created",
      projectId: sandbox.project_id,
      orgId: sandbox.org_id,
      targetType: "sandboxToken",
      targetId: created.row.id,
      details: { sandboxId: sandbox.id, name: input.name },
    });
    return created;
  });
}

/**
 * A fresh token for the sandbox's own environment at a start, not written yet: a start records
 * its id in the sandbox's row with the state it moves to, then writes it with `writePlatformToken`
 * (or in the transaction that creates the sandbox).
 */
export function newPlatformToken(sandbox: TokenOwner): NewToken {
  return newToken(sandbox, PLATFORM_TOKEN_NAME, "svc_sandbox", null);
}

/** Writes a platform token `newPlatformToken` made, revoking the one it replaces. */
export async function writePlatformToken(
  db: Kysely<SandboxDB>,
  platform: NewToken,
  replaces: string | null,
): Promise<void> {
  if (replaces)
    await db.updateTable("sandbox_tokens").set({ revoked_at: new Date() }).where("id", "=", replaces).execute();
  await db.insertInto("sandbox_tokens").values(platform.row).execute();
}

/** A fresh token for the sandbox's own environment at each start; the previous one is revoked. */
export async function mintPlatformToken(deps: SandboxDeps, sandbox: SandboxRow): Promise<string> {
  const platform = newPlatformToken(sandbox);
  await writePlatformToken(deps.db, platform, sandbox.platform_token_id);
  await deps.db
    .updateTable("sandboxes")
    .set({ platform_token_id: platform.row.id })
    .where("id", "=", sandbox.id)
    .execute();
  return platform.token;
}

export async function listSandboxTokens(deps: SandboxDeps, projectId: string): Promise<TokenRow[]> {
  return deps.db
    .selectFrom("sandbox_tokens")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("revoked_at", "is", null)
    .orderBy("id", "desc")
    .execute();
}

export async function getSandboxTokenRow(deps: SandboxDeps, id: string): Promise<TokenRow> {
  const row = await deps.db
    .selectFrom("sandbox_tokens")
    .selectAll()
    .where("id", "=", id)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  if (!row) throw new ProblemError("not-found", { detail: `Sandbox token ${id} was not found` });
  return row;
}

export async function revokeSandboxToken(
  deps: SandboxDeps,
  caller: Caller,
  { token: row }: { token: TokenRow },
): Promise<void> {
  await withDomainEvents(deps, async (trx) => {
    await trx.updateTable("sandbox_tokens").set({ revoked_at: new Date() }).where("id", "=", row.id).execute();
    await recordSandboxEvent(deps, trx, caller, {
      action: "sandbox_token.revoked",
      projectId: row.project_id,
      orgId: row.org_id,
      targetType: "sandboxToken",
      targetId: row.id,
      details: { sandboxId: row.sandbox_id },
    });
  });
}

export async function revokeTokensOfSandbox(deps: SandboxDeps, sandboxId: string): Promise<void> {
  await deps.db
    .updateTable("sandbox_tokens")
    .set({ revoked_at: new Date() })
    .where("sandbox_id", "=", sandboxId)
    .where("revoked_at", "is", null)
    .execute();
}

/**
 * The principal behind a sandbox token, or a 401 problem (unknown, revoked, expired, malformed, or
 * its sandbox deleted or being deleted). The sandbox is looked at too: a token minted while the
 * sandbox was deleted (its row read before the delete revoked the tokens, written after) is
 * revoked by nothing, and must not outlive it.
 */
export async function resolveSandboxToken(deps: SandboxDeps, token: string): Promise<Principal> {
  const invalid = new ProblemError("unauthenticated", { detail: "The sandbox token is not valid" });
  const match = TOKEN_SHAPE.exec(token);
  if (!match) throw invalid;
  const id = `sbt_${match[1]}`;
  const row = await deps.db
    .selectFrom("sandbox_tokens")
    .innerJoin("sandboxes", "sandboxes.id", "sandbox_tokens.sandbox_id")
    .selectAll("sandbox_tokens")
    .where("sandbox_tokens.id", "=", id)
    .where("sandboxes.state", "<>", "deleting")
    .executeTakeFirst();
  if (!row || row.revoked_at || (row.expires_at && new Date(row.expires_at) <= new Date())) throw invalid;
  const expected = Buffer.from(row.secret_hash, "hex");
  const actual = Buffer.from(hashSecret(match[2] as string), "hex");
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) throw invalid;
  void deps.db
    .updateTable("sandbox_tokens")
    .set({ last_used_at: new Date() })
    .where("id", "=", id)
    .execute()
    .catch(() => {});
  return {
    type: "sandbox",
    id: row.id,
    displayName: row.name,
    projectId: row.project_id,
    sandboxId: row.sandbox_id,
    ...(row.org_id ? { orgId: row.org_id } : {}),
  };
}

export function toSandboxToken(row: TokenRow) {
  const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
  return {
    id: row.id,
    projectId: row.project_id,
    sandboxId: row.sandbox_id,
    name: row.name,
    createdAt: new Date(row.created_at).toISOString(),
    expiresAt: iso(row.expires_at),
    lastUsedAt: iso(row.last_used_at),
  };
}
