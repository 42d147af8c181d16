import {
  type CredentialKind,
  type CredentialResource,
  type FindCredentialsRequest,
  type FindCredentialsResponse,
  newId,
} from "@agentplane/contracts";
import { isUniqueViolation } from "@agentplane/db";
import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { conflict, notFound } from "@agentplane/problem-details";
import type { ProjectCaller } from "@agentplane/service-kit";
import type { Kysely, Selectable } from "kysely";
import type { GovernanceContext } from "../context.ts";
import { type Envelope, type MasterKeys, openFields, rewrapKey, sealFields } from "../crypto/envelope.ts";
import { jsonb } from "../db/json.ts";
import type { CredentialsTable, GovernanceDb } from "../db/schema.ts";
import { fieldsOf, metadataOf } from "./credential-fields.ts";
import { enforceScopeLimit } from "./object-limits.ts";

type Row = Selectable<CredentialsTable>;
const iso = (d: Date | string) => new Date(d).toISOString();
const aad = (id: string, version: number) => `credential:${id}:${version}`;

function toCredential(row: Row): CredentialResource {
  return {
    id: row.id,
    projectId: row.project_id,
    orgId: row.org_id,
    name: row.name,
    kind: row.kind as CredentialKind,
    ...(row.description !== null ? { description: row.description } : {}),
    labels: row.labels as unknown as Record<string, string>,
    metadata: row.metadata as unknown as Record<string, string>,
    secretVersion: row.secret_version,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    ...(row.rotated_at ? { rotatedAt: iso(row.rotated_at) } : {}),
    ...(row.last_used_at ? { lastUsedAt: iso(row.last_used_at) } : {}),
    useCount: Number(row.use_count),
  };
}

export function masterKeys(ctx: GovernanceContext): MasterKeys {
  return { current: ctx.secrets.current, previous: ctx.secrets.previous };
}

export interface CredentialScope {
  orgId: string;
  projectId: string;
}

export async function createCredential(
  ctx: GovernanceContext,
  caller: ProjectCaller,
  body: {
    name: string;
    kind: CredentialKind;
    description?: string | undefined;
    labels?: Record<string, string> | undefined;
  } & Record<string, unknown>,
): Promise<CredentialResource> {
  const fields = fieldsOf(body.kind, body, true)!;
  const id = newId("credential");
  const envelope = sealFields(masterKeys(ctx), fields, aad(id, 1));
  const now = new Date();
  try {
    const row = await withDomainEvents(ctx, async (trx) => {
      await enforceScopeLimit(ctx, trx, caller, "credentials");
      const inserted = await trx
        .insertInto("credentials")
        .values({
          id,
          org_id: caller.orgId,
          project_id: caller.projectId,
          name: body.name,
          kind: body.kind,
          description: body.description ?? null,
          labels: jsonb(body.labels ?? {}),
          metadata: jsonb(metadataOf(body.kind, fields)),
          secret_version: 1,
          sealed: envelope.sealed,
          wrapped_key: envelope.wrappedKey,
          key_id: envelope.keyId,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      // The record names the credential and its kind, never a field value.
      await recordDomainEvent(ctx, trx, caller.principal, {
        action: "credential.created",
        orgId: caller.orgId,
        projectId: caller.projectId,
        targetType: "credential",
        targetId: id,
        details: { name: body.name, kind: body.kind },
        requestId: caller.requestId,
      });
      return inserted;
    });
    return toCredential(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`A credential named "${body.name}" already exists in this project`);
    throw err;
  }
}

async function findCredential(db: Kysely<GovernanceDb>, scope: CredentialScope, id: string): Promise<Row> {
  const row = await db
    .selectFrom("credentials")
    .selectAll()
    .where("id", "=", id)
    .where("project_id", "=", scope.projectId)
    .executeTakeFirst();
  if (!row) throw notFound("Credential", id);
  return row;
}

export async function getCredential(
  ctx: GovernanceContext,
  caller: ProjectCaller,
  { credentialId: id }: { credentialId: string },
) {
  return toCredential(await findCredential(ctx.db, caller, id));
}

export async function listCredentials(
  ctx: GovernanceContext,
  caller: ProjectCaller,
  page: { limit: number; cursor?: string | undefined },
): Promise<{ items: CredentialResource[]; nextCursor?: string }> {
  let query = ctx.db
    .selectFrom("credentials")
    .selectAll()
    .where("project_id", "=", caller.projectId)
    .orderBy("id")
    .limit(page.limit + 1);
  if (page.cursor) query = query.where("id", ">", page.cursor);
  const rows = await query.execute();
  const items = rows.slice(0, page.limit).map(toCredential);
  return rows.length > page.limit ? { items, nextCursor: items.at(-1)!.id } : { items };
}

/** Metadata changes, or a rotation: new fields make secret version n+1, the old one usable for the grace period. */
export async function updateCredential(
  ctx: GovernanceContext,
  caller: ProjectCaller,
  {
    credentialId: id,
    ...body
  }: {
    credentialId: string;
    name?: string | undefined;
    description?: string | undefined;
    labels?: Record<string, string> | undefined;
  } & Record<string, unknown>,
): Promise<CredentialResource> {
  const current = await findCredential(ctx.db, caller, id);
  const kind = current.kind as CredentialKind;
  const fields = fieldsOf(kind, body, false);
  const now = new Date();
  const next = current.secret_version + 1;
  const envelope = fields ? sealFields(masterKeys(ctx), fields, aad(id, next)) : undefined;
  try {
    const row = await withDomainEvents(ctx, async (trx) => {
      const updated = await trx
        .updateTable("credentials")
        .set({
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.labels !== undefined ? { labels: jsonb(body.labels) } : {}),
          ...(envelope && fields
            ? {
                metadata: jsonb(metadataOf(kind, fields)),
                secret_version: next,
                sealed: envelope.sealed,
                wrapped_key: envelope.wrappedKey,
                key_id: envelope.keyId,
                previous_sealed: current.sealed,
                previous_wrapped_key: current.wrapped_key,
                previous_key_id: current.key_id,
                previous_expires_at: new Date(now.getTime() + ctx.secrets.rotationGraceMs),
                rotated_at: now,
              }
            : {}),
          updated_at: now,
        })
        .where("id", "=", id)
        // A concurrent rotation cannot be overwritten silently.
        .where("secret_version", "=", current.secret_version)
        .returningAll()
        .executeTakeFirst();
      if (!updated) throw conflict("The credential changed meanwhile; retry");
      await recordDomainEvent(ctx, trx, caller.principal, {
        action: envelope ? "credential.rotated" : "credential.updated",
        orgId: caller.orgId,
        projectId: caller.projectId,
        targetType: "credential",
        targetId: id,
        details: { secretVersion: updated.secret_version },
        requestId: caller.requestId,
      });
      return updated;
    });
    return toCredential(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`A credential named "${body.name}" already exists in this project`);
    throw err;
  }
}

export async function deleteCredential(
  ctx: GovernanceContext,
  caller: ProjectCaller,
  { credentialId: id }: { credentialId: string },
) {
  await findCredential(ctx.db, caller, id);
  await withDomainEvents(ctx, async (trx) => {
    await trx.deleteFrom("credentials").where("id", "=", id).execute();
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "credential.deleted",
      orgId: caller.orgId,
      projectId: caller.projectId,
      targetType: "credential",
      targetId: id,
      requestId: caller.requestId,
    });
  });
}

/** The plaintext fields of the current secret (or of the previous one within its grace period). */
export async function openCredential(
  ctx: GovernanceContext,
  projectId: string,
  id: string,
  version?: number,
): Promise<{ row: Row; fields: Record<string, string>; version: number }> {
  const row = await ctx.db
    .selectFrom("credentials")
    .selectAll()
    .where("id", "=", id)
    .where("project_id", "=", projectId)
    .executeTakeFirst();
  if (!row) throw notFound("Credential", id);
  const wanted = version ?? row.secret_version;
  let envelope: Envelope | undefined;
  if (wanted === row.secret_version) envelope = { sealed: row.sealed, wrappedKey: row.wrapped_key, keyId: row.key_id };
  else if (
    wanted === row.secret_version - 1 &&
    row.previous_sealed &&
    row.previous_wrapped_key &&
    row.previous_key_id &&
    row.previous_expires_at &&
    new Date(row.previous_expires_at).getTime() > Date.now()
  ) {
    envelope = { sealed: row.previous_sealed, wrappedKey: row.previous_wrapped_key, keyId: row.previous_key_id };
  }
  if (!envelope) throw notFound(`Version ${wanted} of credential`, id);
  return { row, fields: openFields(masterKeys(ctx), envelope, aad(id, wanted)), version: wanted };
}

/**
 * A project's credential of each kind asked, without secrets: the oldest of a kind wins, so adding
 * another one never silently switches the project's account.
 */
export async function findCredentials(
  ctx: GovernanceContext,
  request: FindCredentialsRequest,
): Promise<FindCredentialsResponse> {
  let query = ctx.db
    .selectFrom("credentials")
    .select(["id", "kind", "name", "secret_version", "updated_at"])
    .where("project_id", "=", request.projectId)
    .where("kind", "in", request.kinds);
  if (request.ids) query = query.where("id", "in", request.ids);
  const rows = await query.orderBy("created_at").orderBy("id").execute();
  const items: FindCredentialsResponse["items"] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    if (seen.has(row.kind)) continue;
    seen.add(row.kind);
    items.push({
      id: row.id,
      kind: row.kind as FindCredentialsResponse["items"][number]["kind"],
      name: row.name,
      secretVersion: row.secret_version,
      updatedAt: iso(row.updated_at),
    });
  }
  return { items };
}

/**
 * Re-wraps every data key still wrapped by the previous master key with the current one (after an
 * operator set AGENTPLANE_SECRET_KEY to a new key and AGENTPLANE_SECRET_KEY_PREVIOUS to the old);
 * governance runs it at every start with both keys set. The sealed fields stay as they are.
 * Records the current key wraps already are left alone, so a second run (another replica, the
 * next start) changes nothing; a record rotated meanwhile is not overwritten. Throws, naming the
 * credential, when neither key opens one. Returns how many records changed.
 */
export async function rewrapCredentials(db: Kysely<GovernanceDb>, keys: MasterKeys): Promise<number> {
  const rows = await db.selectFrom("credentials").selectAll().execute();
  let changed = 0;
  for (const row of rows) {
    let current: ReturnType<typeof rewrapKey>;
    let previous: ReturnType<typeof rewrapKey> | undefined;
    try {
      current = rewrapKey(
        keys,
        { sealed: row.sealed, wrappedKey: row.wrapped_key, keyId: row.key_id },
        aad(row.id, row.secret_version),
      );
      previous =
        row.previous_sealed && row.previous_wrapped_key && row.previous_key_id
          ? rewrapKey(
              keys,
              { sealed: row.previous_sealed, wrappedKey: row.previous_wrapped_key, keyId: row.previous_key_id },
              aad(row.id, row.secret_version - 1),
            )
          : undefined;
    } catch {
      throw new Error(
        `the credential ${row.id} opens with neither AGENTPLANE_SECRET_KEY nor AGENTPLANE_SECRET_KEY_PREVIOUS: ` +
          "set AGENTPLANE_SECRET_KEY_PREVIOUS to the master key in use before this rotation",
      );
    }
    if (current.keyId === row.key_id && (!previous || previous.keyId === row.previous_key_id)) continue;
    const result = await db
      .updateTable("credentials")
      .set({
        wrapped_key: current.wrappedKey,
        key_id: current.keyId,
        ...(previous ? { previous_wrapped_key: previous.wrappedKey, previous_key_id: previous.keyId } : {}),
      })
      .where("id", "=", row.id)
      .where("secret_version", "=", row.secret_version)
      .where("key_id", "=", row.key_id)
      .executeTakeFirst();
    changed += Number(result.numUpdatedRows);
  }
  return changed;
}
