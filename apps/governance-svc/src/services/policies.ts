import { newId, type PolicyResource, type PolicyVersionResource } from "@agentplane/contracts";
import { isUniqueViolation } from "@agentplane/db";
import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { conflict, notFound } from "@agentplane/problem-details";
import type { Caller } from "@agentplane/service-kit";
import { type Kysely, type Selectable, sql } from "kysely";
import type { GovernanceContext } from "../context.ts";
import { jsonb } from "../db/json.ts";
import type { GovernanceDb, PoliciesTable, PolicyVersionsTable, StoredRule } from "../db/schema.ts";
import { enforceBoundSize } from "./bound-size.ts";
import { enforceScopeLimit } from "./object-limits.ts";
import { pageLength } from "./page-size.ts";

/** Where a policy lives: an organization, or a project of it. */
export interface PolicyScope {
  orgId: string;
  projectId?: string | undefined;
}

/** The fields of a policy a change may set (with the reason recorded on a new version). */
export interface PolicyPatch {
  name?: string | undefined;
  description?: string | undefined;
  labels?: Record<string, string> | undefined;
  cedar?: string | undefined;
  reason?: string | undefined;
}

const iso = (d: Date | string) => new Date(d).toISOString();
/** Versions are Postgres integers: a number past this is no version (and must not reach a query). */
const MAX_VERSION = 2_147_483_647;
const rulesOut = (rules: StoredRule[]) => rules.map((r) => ({ id: r.id, effect: r.effect }));

function toPolicy(row: Selectable<PoliciesTable>, version: Selectable<PolicyVersionsTable>): PolicyResource {
  return {
    id: row.id,
    scope: row.project_id ? "project" : "org",
    orgId: row.org_id,
    ...(row.project_id ? { projectId: row.project_id } : {}),
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    labels: row.labels as unknown as Record<string, string>,
    cedar: version.cedar,
    version: row.latest_version,
    rules: rulesOut(version.rules as unknown as StoredRule[]),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

function toVersion(row: Selectable<PolicyVersionsTable>): PolicyVersionResource {
  return {
    policyId: row.policy_id,
    version: row.version,
    cedar: row.cedar,
    rules: rulesOut(row.rules as unknown as StoredRule[]),
    author: row.author,
    ...(row.reason !== null ? { reason: row.reason } : {}),
    createdAt: iso(row.created_at),
  };
}

/** The policy if it lives in this scope exactly (another org's or project's id answers 404). */
/** The policy in the caller's scope (404 otherwise); `lock` holds its row until the transaction ends. */
export async function findPolicy(
  db: Kysely<GovernanceDb>,
  scope: PolicyScope,
  policyId: string,
  options: { lock?: "update" } = {},
) {
  let query = db.selectFrom("policies").selectAll().where("id", "=", policyId).where("org_id", "=", scope.orgId);
  query = scope.projectId ? query.where("project_id", "=", scope.projectId) : query.where("project_id", "is", null);
  if (options.lock === "update") query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw notFound("Policy", policyId);
  return row;
}

async function versionRow(db: Kysely<GovernanceDb>, policyId: string, version: number) {
  return db
    .selectFrom("policy_versions")
    .selectAll()
    .where("policy_id", "=", policyId)
    .where("version", "=", version)
    .executeTakeFirst();
}

export async function createPolicy(
  ctx: GovernanceContext,
  caller: Caller,
  input: { name: string; description?: string | undefined; labels?: Record<string, string> | undefined; cedar: string },
): Promise<PolicyResource> {
  const rules = await ctx.compiler.compile(input.cedar);
  const id = newId("policy");
  const now = new Date();
  try {
    return await withDomainEvents(ctx, async (trx) => {
      await enforceScopeLimit(ctx, trx, caller, "policies");
      const row = await trx
        .insertInto("policies")
        .values({
          id,
          org_id: caller.orgId,
          project_id: caller.projectId ?? null,
          scope_key: caller.projectId ?? caller.orgId,
          name: input.name,
          description: input.description ?? null,
          labels: jsonb(input.labels ?? {}),
          latest_version: 1,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const version = await trx
        .insertInto("policy_versions")
        .values({
          policy_id: id,
          version: 1,
          cedar: input.cedar,
          rules: jsonb(rules),
          author: caller.principal.id,
          reason: null,
          created_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await recordDomainEvent(ctx, trx, caller.principal, {
        action: "policy.created",
        orgId: caller.orgId,
        projectId: caller.projectId,
        targetType: "policy",
        targetId: id,
        details: { name: input.name, version: 1, ruleIds: rules.map((r) => r.id) },
        requestId: caller.requestId,
      });
      return toPolicy(row, version);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`A policy named "${input.name}" already exists here`);
    throw err;
  }
}

export async function listPolicies(
  ctx: GovernanceContext,
  caller: Caller,
  page: { limit: number; cursor?: string | undefined },
): Promise<{ items: PolicyResource[]; nextCursor?: string }> {
  // The sizes first (the bodies stay in the database), then the bodies of those that fit a page.
  let sizes = ctx.db
    .selectFrom("policies as p")
    .innerJoin("policy_versions as v", (j) =>
      j.onRef("v.policy_id", "=", "p.id").onRef("v.version", "=", "p.latest_version"),
    )
    .select(sql<number>`octet_length(v.cedar)`.as("bytes"))
    .where("p.org_id", "=", caller.orgId)
    .orderBy("p.id")
    .limit(page.limit + 1);
  sizes = caller.projectId
    ? sizes.where("p.project_id", "=", caller.projectId)
    : sizes.where("p.project_id", "is", null);
  if (page.cursor) sizes = sizes.where("p.id", ">", page.cursor);
  const found = await sizes.execute();
  const take = pageLength(
    found.map((r) => r.bytes),
    page.limit,
  );
  if (take === 0) return { items: [] };
  let query = ctx.db
    .selectFrom("policies as p")
    .innerJoin("policy_versions as v", (j) =>
      j.onRef("v.policy_id", "=", "p.id").onRef("v.version", "=", "p.latest_version"),
    )
    .selectAll("p")
    .select(["v.cedar", "v.rules", "v.author", "v.reason", "v.policy_id", "v.version", "v.created_at as v_created_at"])
    .where("p.org_id", "=", caller.orgId)
    .orderBy("p.id")
    .limit(take);
  query = caller.projectId
    ? query.where("p.project_id", "=", caller.projectId)
    : query.where("p.project_id", "is", null);
  if (page.cursor) query = query.where("p.id", ">", page.cursor);
  const rows = await query.execute();
  const items = rows.map((row) =>
    toPolicy(row, {
      policy_id: row.policy_id,
      version: row.version,
      cedar: row.cedar,
      rules: row.rules,
      author: row.author,
      reason: row.reason,
      created_at: row.v_created_at,
    }),
  );
  const last = items.at(-1);
  return found.length > take && last ? { items, nextCursor: last.id } : { items };
}

export async function getPolicy(
  ctx: GovernanceContext,
  caller: Caller,
  { policyId }: { policyId: string },
): Promise<PolicyResource> {
  const row = await findPolicy(ctx.db, caller, policyId);
  const version = await versionRow(ctx.db, row.id, row.latest_version);
  if (!version) throw notFound("Policy", policyId);
  return toPolicy(row, version);
}

export async function updatePolicy(
  ctx: GovernanceContext,
  caller: Caller,
  { policyId, ...input }: PolicyPatch & { policyId: string },
): Promise<PolicyResource> {
  const rules = input.cedar !== undefined ? await ctx.compiler.compile(input.cedar) : undefined;
  try {
    const result = await withDomainEvents(ctx, async (trx) => {
      const current = await findPolicy(trx, caller, policyId);
      const now = new Date();
      const nextVersion = rules ? current.latest_version + 1 : current.latest_version;
      const row = await trx
        .updateTable("policies")
        .set({
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.labels !== undefined ? { labels: jsonb(input.labels) } : {}),
          latest_version: nextVersion,
          updated_at: now,
        })
        .where("id", "=", policyId)
        // Two concurrent updates cannot both create version n+1.
        .where("latest_version", "=", current.latest_version)
        .returningAll()
        .executeTakeFirst();
      if (!row) throw conflict("The policy changed meanwhile; read it again and retry");
      if (rules && input.cedar !== undefined) {
        // The bindings that follow the latest version bind the new one from now on.
        const following = await trx
          .selectFrom("bindings")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("policy_id", "=", policyId)
          .where("version", "is", null)
          .executeTakeFirstOrThrow();
        const n = Number(following.n);
        if (n > 0) {
          const size = { statements: rules.length * n, bytes: Buffer.byteLength(input.cedar, "utf8") * n };
          await enforceBoundSize(trx, caller.orgId, size, policyId);
        }
        await trx
          .insertInto("policy_versions")
          .values({
            policy_id: policyId,
            version: nextVersion,
            cedar: input.cedar,
            rules: jsonb(rules),
            author: caller.principal.id,
            reason: input.reason ?? null,
            created_at: now,
          })
          .execute();
      }
      const version = await versionRow(trx, policyId, nextVersion);
      await recordDomainEvent(ctx, trx, caller.principal, {
        action: rules ? "policy.version_created" : "policy.updated",
        orgId: caller.orgId,
        projectId: caller.projectId,
        targetType: "policy",
        targetId: policyId,
        details: { version: nextVersion, ...(rules ? { ruleIds: rules.map((r) => r.id) } : {}) },
        requestId: caller.requestId,
      });
      return toPolicy(row, version!);
    });
    if (rules) await ctx.fanout.changed(caller.orgId);
    return result;
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`A policy named "${input.name}" already exists here`);
    throw err;
  }
}

export async function deletePolicy(ctx: GovernanceContext, caller: Caller, { policyId }: { policyId: string }) {
  await withDomainEvents(ctx, async (trx) => {
    // Locked first: a binding being made waits for this delete (and then finds no policy), or this
    // waits for it and finds it.
    await findPolicy(trx, caller, policyId, { lock: "update" });
    const bound = await trx.selectFrom("bindings").select("id").where("policy_id", "=", policyId).execute();
    if (bound.length > 0) {
      throw conflict(`The policy is bound (${bound.map((b) => b.id).join(", ")}); remove those bindings first`);
    }
    await trx.deleteFrom("policies").where("id", "=", policyId).execute();
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "policy.deleted",
      orgId: caller.orgId,
      projectId: caller.projectId,
      targetType: "policy",
      targetId: policyId,
      requestId: caller.requestId,
    });
  });
}

export async function listPolicyVersions(
  ctx: GovernanceContext,
  caller: Caller,
  { policyId, ...page }: { limit: number; cursor?: string | undefined } & { policyId: string },
): Promise<{ items: PolicyVersionResource[]; nextCursor?: string }> {
  await findPolicy(ctx.db, caller, policyId);
  // A cursor past every possible version bounds nothing (it is not sent to the database).
  const cursor = page.cursor && /^\d+$/.test(page.cursor) ? Number(page.cursor) : undefined;
  const before = cursor !== undefined && cursor <= MAX_VERSION ? cursor : undefined;
  const versions = () => {
    const query = ctx.db.selectFrom("policy_versions").where("policy_id", "=", policyId).orderBy("version", "desc");
    return before === undefined ? query : query.where("version", "<", before);
  };
  // The sizes first (the bodies stay in the database), then the bodies of those that fit a page.
  const found = await versions()
    .select(sql<number>`octet_length(cedar)`.as("bytes"))
    .limit(page.limit + 1)
    .execute();
  const take = pageLength(
    found.map((r) => r.bytes),
    page.limit,
  );
  if (take === 0) return { items: [] };
  const items = (await versions().selectAll().limit(take).execute()).map(toVersion);
  const last = items.at(-1);
  return found.length > take && last ? { items, nextCursor: String(last.version) } : { items };
}

export async function getPolicyVersion(
  ctx: GovernanceContext,
  caller: Caller,
  { policyId, version }: { policyId: string; version: number },
): Promise<PolicyVersionResource> {
  await findPolicy(ctx.db, caller, policyId);
  const row = version <= MAX_VERSION ? await versionRow(ctx.db, policyId, version) : undefined;
  if (!row) throw notFound(`Version ${version} of policy`, policyId);
  return toVersion(row);
}
