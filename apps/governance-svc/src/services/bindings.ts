import { type BindingTarget, newId, type PolicyBindingResource, parseSelector } from "@agentplane/contracts";
import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { badRequest, notFound, ProblemError } from "@agentplane/problem-details";
import type { Caller } from "@agentplane/service-kit";
import type { Selectable } from "kysely";
import type { GovernanceContext } from "../context.ts";
import { jsonb } from "../db/json.ts";
import type { BindingsTable, BindingTargetJson } from "../db/schema.ts";
import { enforceBoundSize, versionSize } from "./bound-size.ts";
import { enforceScopeLimit } from "./object-limits.ts";
import type { PolicyScope } from "./policies.ts";

export function toBinding(row: Selectable<BindingsTable>): PolicyBindingResource {
  return {
    id: row.id,
    scope: row.project_id ? "project" : "org",
    orgId: row.org_id,
    ...(row.project_id ? { projectId: row.project_id } : {}),
    policyId: row.policy_id,
    version: row.version ?? "latest",
    mode: row.mode,
    target: row.target as unknown as BindingTargetJson as BindingTarget,
    createdBy: row.created_by,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

export interface CreateBindingInput {
  policyId: string;
  version?: number | "latest" | undefined;
  mode?: "enforce" | "dryrun" | undefined;
  target?: BindingTarget | undefined;
}

/** The projects an org binding narrows to must be projects of this organization the caller can see. */
async function checkProjects(ctx: GovernanceContext, caller: Caller, orgId: string, projectIds: readonly string[]) {
  for (const projectId of projectIds) {
    const answer = await ctx.authorizer.check({ principal: caller.principal, permission: "project:read", projectId });
    if (answer.decision === "not_found" || (answer.orgId && answer.orgId !== orgId))
      throw notFound("Project", projectId);
  }
}

export async function createBinding(
  ctx: GovernanceContext,
  caller: Caller,
  input: CreateBindingInput,
): Promise<PolicyBindingResource> {
  const target: BindingTarget = input.target ?? {};
  if (target.projectIds && caller.projectId) {
    throw badRequest("A project binding cannot name projects", [
      { pointer: "/body/target/projectIds", message: "only organization bindings narrow to projects" },
    ]);
  }
  if (target.projectSelector !== undefined) {
    if (caller.projectId) {
      throw badRequest("A project binding cannot select projects", [
        { pointer: "/body/target/projectSelector", message: "only organization bindings select projects by label" },
      ]);
    }
    try {
      parseSelector(target.projectSelector);
    } catch (err) {
      throw badRequest("The project selector does not parse", [
        { pointer: "/body/target/projectSelector", message: (err as Error).message },
      ]);
    }
  }
  if (target.selector !== undefined) {
    if (!target.kind) {
      throw badRequest("A selector needs a kind", [
        { pointer: "/body/target/kind", message: "required with a selector" },
      ]);
    }
    try {
      parseSelector(target.selector);
    } catch (err) {
      throw badRequest("The selector does not parse", [
        { pointer: "/body/target/selector", message: (err as Error).message },
      ]);
    }
  }
  const policy = await ctx.db
    .selectFrom("policies")
    .select(["id", "name", "project_id", "latest_version"])
    .where("id", "=", input.policyId)
    .where("org_id", "=", caller.orgId)
    .executeTakeFirst();
  // A project policy is visible only from its own project; an org policy from the org and its projects.
  if (!policy || (policy.project_id !== null && policy.project_id !== caller.projectId)) {
    if (policy && !caller.projectId) {
      throw new ProblemError("bad-request", { detail: "A project policy cannot be bound at the organization level" });
    }
    throw notFound("Policy", input.policyId);
  }
  const version = typeof input.version === "number" ? input.version : null;
  if (version !== null && version > policy.latest_version) {
    throw badRequest(`Policy "${policy.name}" (${policy.id}) has no version ${version}`, [
      { pointer: "/body/version", message: `at most ${policy.latest_version}` },
    ]);
  }
  if (target.projectIds) await checkProjects(ctx, caller, caller.orgId, target.projectIds);
  const id = newId("policyBinding");
  const row = await withDomainEvents(ctx, async (trx) => {
    // Its row locked against a delete until this commits; deleted since it was read: not found.
    const still = await trx
      .selectFrom("policies")
      .select("id")
      .where("id", "=", policy.id)
      .forShare()
      .executeTakeFirst();
    if (!still) throw notFound("Policy", input.policyId);
    await enforceScopeLimit(ctx, trx, caller, "bindings");
    await enforceBoundSize(trx, caller.orgId, await versionSize(trx, policy.id, version ?? policy.latest_version));
    const inserted = await trx
      .insertInto("bindings")
      .values({
        id,
        org_id: caller.orgId,
        project_id: caller.projectId ?? null,
        policy_id: policy.id,
        version,
        mode: input.mode ?? "enforce",
        target: jsonb(target),
        created_by: caller.principal.id,
        created_at: new Date(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "policy_binding.created",
      orgId: caller.orgId,
      projectId: caller.projectId,
      targetType: "policy_binding",
      targetId: id,
      details: { policyId: policy.id, version: version ?? "latest", mode: inserted.mode, target },
      requestId: caller.requestId,
    });
    return inserted;
  });
  await ctx.fanout.changed(caller.orgId);
  return toBinding(row);
}

async function findBinding(ctx: GovernanceContext, scope: PolicyScope, bindingId: string) {
  let query = ctx.db.selectFrom("bindings").selectAll().where("id", "=", bindingId).where("org_id", "=", scope.orgId);
  query = scope.projectId ? query.where("project_id", "=", scope.projectId) : query.where("project_id", "is", null);
  const row = await query.executeTakeFirst();
  if (!row) throw notFound("Policy binding", bindingId);
  return row;
}

export async function getBinding(ctx: GovernanceContext, caller: Caller, { bindingId }: { bindingId: string }) {
  return toBinding(await findBinding(ctx, caller, bindingId));
}

export async function listBindings(
  ctx: GovernanceContext,
  caller: Caller,
  page: { limit: number; cursor?: string | undefined },
): Promise<{ items: PolicyBindingResource[]; nextCursor?: string }> {
  let query = ctx.db
    .selectFrom("bindings")
    .selectAll()
    .where("org_id", "=", caller.orgId)
    .orderBy("id")
    .limit(page.limit + 1);
  query = caller.projectId ? query.where("project_id", "=", caller.projectId) : query.where("project_id", "is", null);
  if (page.cursor) query = query.where("id", ">", page.cursor);
  const rows = await query.execute();
  const items = rows.slice(0, page.limit).map(toBinding);
  return rows.length > page.limit ? { items, nextCursor: items.at(-1)!.id } : { items };
}

export async function deleteBinding(ctx: GovernanceContext, caller: Caller, { bindingId }: { bindingId: string }) {
  const row = await findBinding(ctx, caller, bindingId);
  await withDomainEvents(ctx, async (trx) => {
    await trx.deleteFrom("bindings").where("id", "=", row.id).execute();
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "policy_binding.deleted",
      orgId: caller.orgId,
      projectId: caller.projectId,
      targetType: "policy_binding",
      targetId: row.id,
      details: { policyId: row.policy_id },
      requestId: caller.requestId,
    });
  });
  await ctx.fanout.changed(caller.orgId);
}
