import { minOrgRole, newId, type Organization } from "@agentplane/contracts";
import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import type { Caller, Requester } from "@agentplane/service-kit";
import { sql } from "kysely";
import { actorOf } from "../authz/local-authorizer.ts";
import { requireTokenScope } from "../authz/token-scope.ts";
import type { TenancyContext } from "../context.ts";
import { enforceUserLimit } from "./object-limits.ts";
import { changedFields, page, toOrganization } from "./serialize.ts";

/**
 * Creates an organization with the caller as its owner (there is no organization to authorize in
 * yet), unless the user already owns as many as the `organizations` limit allows.
 */
export async function createOrganization(
  ctx: TenancyContext,
  caller: Requester,
  input: { name: string },
): Promise<Organization> {
  const actor = actorOf(caller.principal);
  if (!actor) throw new ProblemError("forbidden", { detail: "Only users and their API tokens create organizations" });
  if (actor.orgId) {
    throw new ProblemError("forbidden", { detail: "A token bound to an organization cannot create organizations" });
  }
  const org = await withDomainEvents(ctx, async (trx) => {
    await enforceUserLimit(ctx, trx, "organizations", actor.userId);
    const row = await trx
      .insertInto("orgs")
      .values({ id: newId("org"), name: input.name, updated_at: new Date() })
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx.insertInto("org_members").values({ org_id: row.id, user_id: actor.userId, role: "owner" }).execute();
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "organization.created",
      orgId: row.id,
      targetType: "organization",
      targetId: row.id,
      details: { name: input.name },
      requestId: caller.requestId,
    });
    return row;
  });
  return toOrganization(org, actor.cap ? minOrgRole("owner", actor.cap) : "owner");
}

/** The organizations the caller is a member of, each with the caller's role there. */
export async function listOrganizations(
  ctx: TenancyContext,
  caller: Requester,
  query: { limit: number; cursor?: string | undefined },
): Promise<{ items: Organization[]; nextCursor?: string }> {
  requireTokenScope(caller, "org:read");
  const actor = actorOf(caller.principal);
  if (!actor) return { items: [] };
  let q = ctx.db
    .selectFrom("orgs as o")
    .innerJoin("org_members as m", "m.org_id", "o.id")
    .selectAll("o")
    .select("m.role as member_role")
    .where("m.user_id", "=", actor.userId)
    .orderBy("o.id")
    .limit(query.limit + 1);
  if (actor.orgId) q = q.where("o.id", "=", actor.orgId);
  if (query.cursor) q = q.where("o.id", ">", query.cursor);
  const rows = await q.execute();
  const result = page(rows, query.limit);
  return {
    items: result.items.map((r) => toOrganization(r, actor.cap ? minOrgRole(r.member_role, actor.cap) : r.member_role)),
    ...(result.nextCursor ? { nextCursor: result.nextCursor } : {}),
  };
}

/** The caller's organization, with the caller's role in it. */
export async function getOrganization(ctx: TenancyContext, caller: Caller): Promise<Organization> {
  const row = await ctx.db.selectFrom("orgs").selectAll().where("id", "=", caller.orgId).executeTakeFirst();
  if (!row) throw new ProblemError("not-found", { detail: `Organization ${caller.orgId} was not found` });
  return toOrganization(row, caller.orgRole);
}

export async function updateOrganization(
  ctx: TenancyContext,
  caller: Caller,
  input: { name?: string | undefined },
): Promise<Organization> {
  const { orgId } = caller;
  const row = await withDomainEvents(ctx, async (trx) => {
    const current = await trx.selectFrom("orgs").selectAll().where("id", "=", orgId).forUpdate().executeTakeFirst();
    if (!current) throw new ProblemError("not-found", { detail: `Organization ${orgId} was not found` });
    const fields = changedFields(input, current, "name");
    // A patch that changes nothing (an empty one, or the name the organization has) leaves it as it
    // is: no event, and updatedAt keeps the time of the last real change.
    if (fields.length === 0) return current;
    const row = await trx
      .updateTable("orgs")
      .set({ ...(fields.includes("name") ? { name: input.name } : {}), updated_at: sql<Date>`now()` })
      .where("id", "=", orgId)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new ProblemError("not-found", { detail: `Organization ${orgId} was not found` });
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "organization.updated",
      orgId,
      targetType: "organization",
      targetId: orgId,
      details: { fields },
      requestId: caller.requestId,
    });
    return row;
  });
  return toOrganization(row, caller.orgRole);
}

/**
 * Deletes the organization; teams, projects, keys, invitations, memberships and tokens go with it.
 * Its audit trail stays (audit-svc prunes by age only), and so does the record of the deletion.
 */
export async function deleteOrganization(ctx: TenancyContext, caller: Caller): Promise<void> {
  const { orgId } = caller;
  await withDomainEvents(ctx, async (trx) => {
    const row = await trx.deleteFrom("orgs").where("id", "=", orgId).returning("name").executeTakeFirst();
    if (!row) return;
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "organization.deleted",
      orgId,
      targetType: "organization",
      targetId: orgId,
      details: { name: row.name },
      requestId: caller.requestId,
    });
  });
}
